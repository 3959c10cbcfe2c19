"""``python -m gthinker``: the ``gthinker`` command."""

from gthinker.cli.main import program

program()
