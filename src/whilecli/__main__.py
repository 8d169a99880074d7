"""``python3 -m whilecli ...``: the ``whilecli`` program without its script on ``PATH``."""

from whilecli.cli import run

if __name__ == "__main__":
    run()
