"""slow_bot at 4 ms a decision: a set of matches takes seconds, long enough to be caught in
play, short enough for a test."""

import slow_bot
from slow_bot import decide

from cardshark_bot import run

slow_bot.DELAY_S = 0.004

if __name__ == "__main__":
    run(decide, name="brisk")
