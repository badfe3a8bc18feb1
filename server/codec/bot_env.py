"""Where a managed bot finds the referee: the descriptor, its address, and the launcher."""

BOT_FD = 3  # the descriptor a managed bot finds its end of the socket pair on
SERVER_ADDRESS = f"fd:{BOT_FD}"  # its CARDSHARK_SERVER
# The shell line that moves the socket from the launcher's stdin to fd 3 and gives the bot
# /dev/null as stdin, as before (subprocess can place a descriptor only on 0, 1 or 2).
FD3_LAUNCHER = ["/bin/sh", "-c", 'exec 3<&0 0</dev/null; exec "$@"', "cardshark-bot"]
