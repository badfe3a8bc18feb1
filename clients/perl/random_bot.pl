#!/usr/bin/env perl
# A cardshark bot in Perl that plays a uniformly random legal action in every game.
# Perl has no gRPC here, so it plays through the stdio bridge of the Python client:
#   python -m cardshark_bot.bridge -- perl clients/perl/random_bot.pl
# Every line on stdin is one message from the server (protobuf's JSON mapping);
# every request is answered with one line: {"request_id": N, "action_id": "..."}.
# At the end the server says {"goodbye": {"reason": "..."}}; the bridge then closes stdin,
# the loop below ends, and the bot exits 0.
use strict;
use warnings;
use JSON::PP;

$| = 1;    # one answer per line, flushed at once
my $json = JSON::PP->new->utf8->canonical;

while (my $line = <STDIN>) {
    my $message = $json->decode($line);
    my $request = $message->{request} or next;    # events need no answer
    my @actions = @{ $request->{legal_actions} };
    my $pick    = $actions[ int rand @actions ];
    print $json->encode({ request_id => $request->{request_id}, action_id => $pick->{id} }), "\n";
}
