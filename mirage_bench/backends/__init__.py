"""Model backends, chosen by a model spec string (see :func:`mirage_bench.backends.registry.make_backend`)."""
