"""``python -m mirage_bench``: the same CLI as the ``mirage-bench`` script."""

from mirage_bench.cli import main

if __name__ == "__main__":
    main()
