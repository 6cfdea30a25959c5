"""Test support that ships with the package, for the test suite and the benchmarks.

``npusim.testing.reference`` is the reference semantics of the device engine: a pure-Python
interpreter of the same SQE arrays with the same ``run`` contract as ``npusim.device.engine.run``,
one function per opcode. Tests compare the engine against it; benchmarks measure against it.
Nothing in the simulator itself imports this package.
"""
