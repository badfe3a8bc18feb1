"""A seeded bot that, the first time any copy of it decides, tells the test its pid through
the FIFO named on its command line and then never answers: the test kills its referee
process in the middle of that match. Every other decision, of every copy, is seeded."""

import os
import sys
import threading

from seeded import pick

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

FIFO = sys.argv.pop(1)  # before the kit reads its own options


def decide(request: DecisionRequest) -> str:
    """Hang at the first decision of all copies (the one that makes the mark), else pick."""
    try:
        os.close(os.open(FIFO + ".mark", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return pick(request)
    with open(FIFO, "w") as fifo:
        fifo.write(f"{os.getpid()}\n")
    threading.Event().wait()  # until the referee process's death takes this one with it
    return pick(request)


if __name__ == "__main__":
    run(decide, name="hang-once")
