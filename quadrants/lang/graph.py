"""`qd.graph`: Quadrants' namespace for CUDA graph constructs; `qd.graph.do_while(flag)` is `qd.graph_do_while`
(frontend/loops.py: a host do-while around the kernel's body)."""

from quadrants.frontend.intrinsics import graph_do_while as do_while

__all__ = ["do_while"]
