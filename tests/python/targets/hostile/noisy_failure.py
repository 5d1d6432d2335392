"""Fails with an exception whose message alone is longer than the stderr tail the report keeps,
and ends in terminal control sequences (retitle the window, clear the screen)."""
raise ValueError("x" * 10000 + "\033]0;pwned title\007\033[2J\r")
