"use strict";
// Cards as DOM nodes: rank and a suit glyph every stock font has (DejaVu: ♠ ♥ ♦ ♣ † ⚔ ⚚ ★ ● ➶),
// coloured by suit. A card node carries its code in data-card; text is set, never parsed as HTML.
// Kansas City's colours are a colour-blind-safe palette (Okabe & Ito) and every colour's card
// also carries its letter, so no card is told from another by colour alone.
const Cards = (() => {
  /** A node: el("span", {class: "x"}, "text", child). Strings become text nodes. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const STANDARD = {
    S: ["♠", "black", "spades"], H: ["♥", "red", "hearts"],
    D: ["♦", "red", "diamonds"], C: ["♣", "black", "clubs"],
  };

  /** A deck: suit letter -> [glyph, colour class, name]; rank letter -> shown rank; whole
   * codes drawn specially (Jokers); rankFirst false for codes written suit-last numbers. */
  function deck(suits, ranks, specials, extra) {
    return { suits, ranks: ranks || {}, specials: specials || {}, rankNames: {}, rankSet: "", ...(extra || {}) };
  }

  const decks = {
    standard: deck(STANDARD, { T: "10" }, {}, { rankSet: "23456789TJQKA" }),
    kill: deck(STANDARD, { T: "10" }, { JK: ["★", "joker", "Joker"] }, { rankSet: "23456789TJQKA" }),
    knives: deck(
      { ...STANDARD, K: ["†", "blue", "knives"] },
      {},
      { JO: ["★", "joker", "Joker"] },
      {
        rankNames: { K: "King", Q: "Queen", J: "Jack", M: "Maid", T: "Thief", G: "Ghost" },
        rankSet: "KQJMTGA234567",
      },
    ),
    ninja: deck(
      {
        S: ["⚔", "steel", "sword"], T: ["⚚", "brown", "staff"],
        N: ["†", "blue", "knives"], R: ["★", "gold", "stars"],
      },
      {},
      { "J*": ["J➶", "joker", "Jack of Arrows"] },
      { rankSet: "A23456789K" },
    ),
    kansas: deck(
      {
        R: ["●", "kc-red", "red"], O: ["●", "kc-orange", "orange"],
        Y: ["●", "kc-yellow", "yellow"], G: ["●", "kc-green", "green"],
        B: ["●", "kc-blue", "blue"], P: ["●", "kc-purple", "purple"],
        K: ["●", "kc-black", "black"],
      },
      {}, {}, { lettered: true },
    ),
  };

  /** A suit's glyph alone (trump in a strip, a legend), `letter` being the deck's suit letter. */
  function glyph(d, letter) {
    const [mark, colour, name] = d.suits[letter] || ["?", "", letter];
    return el("span", { class: `glyph ${colour}`, title: name }, mark,
      d.lettered ? el("small", { class: "suit-letter" }, letter) : null);
  }

  /** Codes grouped by suit, each suit where its first card is (an engine deals its hands in its
   * deck's order), the trump groups first in the order given; `suitOf(code)` names a group. */
  function bySuit(codes, suitOf, trumps) {
    const groups = new Map();
    for (const code of codes) {
      const suit = suitOf(code);
      if (!groups.has(suit)) groups.set(suit, []);
      groups.get(suit).push(code);
    }
    const first = (trumps || []).filter((t) => groups.has(t));
    const rest = [...groups.keys()].filter((k) => !first.includes(k));
    return [...first, ...rest].flatMap((k) => groups.get(k));
  }

  /** One card: `code` drawn from `d` (Kansas City codes are number then suit; "T3" a trump,
   * "3?" a card whose face is never shown). */
  function card(d, code) {
    const special = d.specials[code];
    if (special) {
      return el("span", { class: `card ${special[1]}`, "data-card": code, title: special[2] },
        special[0]);
    }
    if (d === decks.kansas && code[0] === "T") {
      return el("span", { class: "card trump", "data-card": code, title: `trump ${code[1]}` },
        code.slice(1), "▲");
    }
    if (d === decks.kansas && code[1] === "?") {  // an upgraded card: its face is never shown
      const title = `${code[0]}, face hidden`;
      return el("span", { class: "card back", "data-card": code, title }, code[0]);
    }
    const [rank, suit] = [code[0], code.slice(1)];
    const [glyph, colour, name] = d.suits[suit] || ["?", "", suit];
    const title = `${d.rankNames[rank] || d.ranks[rank] || rank} of ${name} (${code})`;
    return el("span", { class: `card ${colour}`, "data-card": code, title },
      d.ranks[rank] || rank, glyph, d.lettered ? el("small", { class: "suit-letter" }, suit) : null);
  }

  /** Whether `code` is a card of deck `d` (an action's argument may be a card or not). */
  function isCard(d, code) {
    if (d.specials[code]) return true;
    if (d === decks.kansas) return /^([1-8][A-Z?]|T[1-8])$/.test(code) && (code[1] === "?" || code[0] === "T" || code[1] in d.suits);
    return code.length === 2 && d.rankSet.includes(code[0]) && code[1] in d.suits;
  }

  /** A row of cards (or a dash for none); `cls` adds a class to the row. */
  function cards(d, codes, cls) {
    if (!codes || codes.length === 0) return el("span", { class: `cards none ${cls || ""}` }, "–");
    return el("span", { class: `cards ${cls || ""}` }, codes.map((c) => card(d, c)));
  }

  /** Face-down cards, optionally with the number printed on each back (Kansas City). */
  function backs(count, numbers) {
    const list = numbers || Array.from({ length: count }, () => "");
    return el("span", { class: "cards backs", title: `${list.length} hidden cards` },
      list.map((n) => el("span", { class: "card back" }, n === "" ? "▒" : String(n))));
  }

  return { el, deck, decks, card, cards, backs, glyph, bySuit, isCard };
})();
