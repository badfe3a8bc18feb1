"""The cardshark Python bot SDK: write one function from request to action id."""

from cardshark_bot.client import BotClient, BotRefused, Decide, run

__all__ = ["BotClient", "BotRefused", "Decide", "run"]
