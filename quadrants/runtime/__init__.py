"""Loading compiled code and calling it: ABI records, ndarray memory, loaders and launchers.

Nothing here imports llvmlite at module import time (the ORC loader imports it when first used).
"""
