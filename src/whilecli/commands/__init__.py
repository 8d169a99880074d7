"""Thin command-line layers: parse arguments, call the library, print, exit.

One module per command. A module imports only what its command needs at call time, so
``whilecli route`` never imports torch.
"""
