"""Entry points for the trainers and evaluators judgebox plugs into: :mod:`.verl`, :mod:`.trl`,
:mod:`.openrlhf`. Each imports its framework only when the name that needs it is used."""
