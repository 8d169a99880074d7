"""``python3 -m whilecli ...``: the ``while`` program without its script on ``PATH``."""

from whilecli.cli import app

if __name__ == "__main__":
    app(prog_name="while")
