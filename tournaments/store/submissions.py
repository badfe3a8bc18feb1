"""Stored submissions: an author's bot as sent, its state, and the bot it becomes."""

# A submission's archive is stored with the submission in one transaction, so a refused or
# interrupted upload leaves nothing and a stored one always has its code. Acceptance makes the
# bot in the same transaction as the state, so a crash between them cannot leave an accepted
# submission without its bot (or a bot without its verdict).

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, func, select

from tournaments.errors import (
    AuthorStateError,
    BotNameError,
    SubmissionError,
    UnknownSubmissionError,
)
from tournaments.models import (
    SUBMISSION_DONE,
    Author,
    Bot,
    BotArchive,
    BotRating,
    Submission,
    SubmissionState,
    utc_now,
)
from tournaments.ratings import prior_rating
from tournaments.store.bots import BOT_NAME, BotStore, attach_code
from tournaments.store.keys import hash_token, new_token


@dataclass(frozen=True)
class AuthorsBots:
    """An author's bots (every version, newest first) and submissions (newest first)."""

    bots: list[Bot]
    submissions: list[Submission]


def version_name(name: str, version: int) -> str:
    """The name a replaced version keeps ('@' is in no bot name, so it clashes with none)."""
    return f"{name}@v{version}"


class SubmissionStore(BotStore):
    """Submissions: receive (with the archive), move through states, accept into a bot."""

    def receive_submission(
        self,
        author_id: int,
        name: str,
        games: Sequence[str],
        command: str,
        build: str | None,
        archive: BotArchive,
    ) -> Submission:
        """Store a submission as received with its archive; refuse (SubmissionError or
        BotNameError, nothing written) a bad name, a name of another author's bot, or a
        disabled author."""
        if not BOT_NAME.fullmatch(name):
            raise BotNameError(
                name,
                "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
            )
        if not games:
            raise SubmissionError("a submission names at least one game")
        if not command.strip():
            raise SubmissionError("a submission needs the command that starts the bot")
        with self._write(ratings=False) as session:
            author = session.get(Author, author_id)
            if author is None or author.disabled:
                raise AuthorStateError("this author is disabled: they can submit no bots")
            self._version_after(session, author_id, name)
            if session.get(BotArchive, archive.digest) is None:
                session.add(archive)
                session.flush()
            submission = Submission(
                author_id=author_id,
                name=name,
                games=list(games),
                command=command,
                build=build or None,
                digest=archive.digest,
                detail="waiting to be tested",
            )
            session.add(submission)
            session.flush()
            return submission

    def author_activity(self, author_id: int, since: datetime) -> tuple[int, int]:
        """How many submissions the author sent since then, and how many bots they have in
        play (for the organizer's limits)."""
        with self._read() as session:
            sent = session.exec(
                select(func.count())
                .select_from(Submission)
                .where(Submission.author_id == author_id, col(Submission.created) >= since)
            ).one()
            bots = session.exec(
                select(func.count())
                .select_from(Bot)
                .where(Bot.author_id == author_id, col(Bot.removed).is_(None))
            ).one()
        return int(sent), int(bots)

    def submission(self, submission_id: int, author_id: int | None = None) -> Submission:
        """A submission by id; with author_id, only if it is theirs (else not found)."""
        with self._read() as session:
            return self._submission(session, submission_id, author_id)

    def set_submission_state(
        self, submission_id: int, state: SubmissionState, detail: str
    ) -> Submission:
        """Move a submission on (building, testing, rejected) with what it is doing or why."""
        if state == SubmissionState.ACCEPTED:
            raise ValueError("accept a submission with accept_submission: it makes the bot")
        with self._write(ratings=False) as session:
            submission = self._submission(session, submission_id, None)
            submission.state = state.value
            submission.detail = detail
            submission.updated = utc_now()
            session.add(submission)
            return submission

    def accept_submission(
        self, submission_id: int, detail: str, archive: BotArchive | None = None
    ) -> Bot:
        """Accept a submission: its bot (with the built archive if a build made one) enters
        future schedules. A bot of the same name and author before it is retired, renamed
        NAME@vN, and the new one is version N + 1, starting each game NAME@vN was rated in
        from its mu with the initial sigma."""
        with self._write(ratings=False) as session:
            submission = self._submission(session, submission_id, None)
            if submission.state in SUBMISSION_DONE:
                raise SubmissionError(f"submission {submission_id} is {submission.state} already")
            version = self._version_after(session, submission.author_id, submission.name)
            prior: dict[str, float] = {}
            if version > 1:
                before = session.exec(select(Bot).where(Bot.name == submission.name)).one()
                before.name = version_name(before.name, before.version)
                before.removed = before.removed or utc_now()
                session.add(before)
                session.flush()
                rated = session.exec(select(BotRating).where(BotRating.bot_id == before.id))
                prior = {r.game: r.mu for r in rated}
            bot = Bot(
                name=submission.name,
                token_hash=hash_token(new_token()),  # a managed bot's is handed to it per run
                command=submission.command,
                author_id=submission.author_id,
                version=version,
                prior_mu=prior or None,
            )
            if archive is not None:
                attach_code(session, bot, archive)
            else:
                bot.code_digest = submission.digest
            session.add(bot)
            session.flush()
            assert bot.id is not None
            for game, mu in prior.items():  # ranked at once, at its predecessor's mu
                start = prior_rating(mu)
                session.add(BotRating(bot_id=bot.id, game=game, mu=start.mu, sigma=start.sigma))
            submission.state = SubmissionState.ACCEPTED.value
            submission.detail = detail
            submission.bot_id = bot.id
            submission.updated = utc_now()
            session.add(submission)
            return bot

    def authors_bots(self, author_id: int) -> AuthorsBots:
        """An author's bots and submissions, newest first."""
        with self._read() as session:
            bots = session.exec(
                select(Bot).where(Bot.author_id == author_id).order_by(col(Bot.id).desc())
            ).all()
            submissions = session.exec(
                select(Submission)
                .where(Submission.author_id == author_id)
                .order_by(col(Submission.id).desc())
            ).all()
        return AuthorsBots(list(bots), list(submissions))

    def unfinished_submissions(self) -> list[Submission]:
        """Submissions neither accepted nor rejected, oldest first (to test after a restart)."""
        with self._read() as session:
            return list(
                session.exec(
                    select(Submission)
                    .where(col(Submission.state).not_in([s.value for s in SUBMISSION_DONE]))
                    .order_by(col(Submission.id))
                ).all()
            )

    def authors_bot(self, author_id: int, name: str, *, include_removed: bool = False) -> Bot:
        """The author's bot of this name, in play (or retired too, when asked); BotNameError
        if they have none by it."""
        with self._read() as session:
            query = select(Bot).where(Bot.name == name, Bot.author_id == author_id)
            if not include_removed:
                query = query.where(col(Bot.removed).is_(None))
            bot = session.exec(query).first()
        if bot is None:
            raise BotNameError(name, "is none of your bots")
        return bot

    # -- lookups -------------------------------------------------------------------------------

    def _submission(
        self, session: Session, submission_id: int, author_id: int | None
    ) -> Submission:
        submission = session.get(Submission, submission_id)
        if submission is None or (author_id is not None and submission.author_id != author_id):
            raise UnknownSubmissionError(submission_id)
        return submission

    def _version_after(self, session: Session, author_id: int, name: str) -> int:
        """The version a submission of name makes: 1, or the author's current one + 1;
        BotNameError if the name is another author's bot (live or retired)."""
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        if bot is None:
            return 1
        if bot.author_id != author_id:
            raise BotNameError(name, "is taken by another author's bot")
        return bot.version + 1
