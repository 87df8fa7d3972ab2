"""User-facing objects: `qd.init`, `@qd.kernel`, ndarrays. Built on the driver and the runtime."""
