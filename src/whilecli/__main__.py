from whilecli.cli import app

app(prog_name="while")
