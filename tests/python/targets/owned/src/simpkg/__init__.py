"""A package of the user's: its kernels change its module after the first launch (CS-1)."""
