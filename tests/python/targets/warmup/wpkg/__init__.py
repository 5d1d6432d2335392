"""A three-module package for the warm-up tests: a generic kernel used at two dtypes, a module
launched at two block_dims (CPU blocks on), and a plain module."""
