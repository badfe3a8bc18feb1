"""The web page: leaderboard, bot and tournament pages, replays and live matches."""
