#!/usr/bin/env node
'use strict';
// A cardshark bot that plays a uniformly random legal action in every game.
// Run: CARDSHARK_SERVER=host:port CARDSHARK_TOKEN=... node examples/random_bot.js
const { run } = require('../lib');

function decide(request) {
  const actions = request.legal_actions;
  return actions[Math.floor(Math.random() * actions.length)].id;
}

run(decide, { name: 'random-js' });
