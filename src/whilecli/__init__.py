"""whilecli: route graded RL rollouts to a training method, with evidence.

The package has three layers, each usable without the command line:

- :mod:`whilecli.route`: read graded rows, run the six routing checks, decide, report.
- :mod:`whilecli.methods`: per-token update coefficients for every method of the spec.
- :mod:`whilecli.emit`: writers for trainer configs (prime-rl) and update outputs.
"""

__version__ = "0.1.0"
#: The name the program calls itself by in help, usage lines and messages: ``while``, its
#: alias, is a shell keyword in bash and zsh, which a user cannot type as it is.
PROG = "whilecli"
