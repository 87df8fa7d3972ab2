"""Typed IR: value types (`types`), node classes (`nodes`), the builder (`builder`), the printer (`printer`) and
the verifier (`verifier`). The package loads none of them: the runtime needs only `types`, the compiler the rest."""
