"""The compiler driver: it owns the pipeline (`pipeline.Driver.obtain`) and runs each stage in order.

    build.py     stages 1-2: frontend and passes (imported only when something compiles)
    purity.py    the fastcache purity rules, applied to what the frontend saw a kernel read
    pipeline.py  fast lookup → build → offline lookup or backend compile → store → load
"""

from quadrants.driver.pipeline import Artifact, CompileRequest, Driver, Outcome, driver_for, symbol_for

__all__ = ["Artifact", "CompileRequest", "Driver", "Outcome", "driver_for", "symbol_for"]
