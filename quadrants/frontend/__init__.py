"""Python AST -> typed IR. The visitor (`visitor.py`) is imported only when something compiles."""
