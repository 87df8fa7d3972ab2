"""Python AST -> typed IR. The entry point (`visitor.build_kernel`) is imported only when something compiles."""
