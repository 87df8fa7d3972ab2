"""The PTX ISA the CUDA backend emits (a module of its own: the cache keys read it without importing llvmlite)."""

PTX_ISA = 80  # PTX 8.0: CUDA 12.0 drivers and newer load it; ptxas of CUDA 12 and 13 accept it
