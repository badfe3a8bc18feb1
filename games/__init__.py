"""Pure rules engines for cardshark's games: no I/O, no gRPC, no database.

Compiled by mypyc where a C compiler was present at install (games/_native.py, `ENGINES`
says which build runs and why); the pure Python sources are the same code.
"""

from games._native import EngineBuild, select

ENGINES: EngineBuild = select()
