"""IR -> LLVM IR -> machine code. Importing this package imports llvmlite: only the compile path does."""
