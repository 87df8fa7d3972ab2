"""Present under Quadrants' name because programs reach it: Genesis writes
`qd.lang._template_mapper.__builtins__["__debug__"]` after `qd.init` (a module's `__builtins__` is the
interpreter's builtins namespace, so that write is global and changes nothing here)."""
