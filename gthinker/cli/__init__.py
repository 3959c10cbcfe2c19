"""The command line: ``gthinker`` and its commands (``main``), each app's command made
from its registry entry (``apps``), ``gthinker convert`` (``convert``) and ``gthinker
warmup`` (``warmup``)."""
