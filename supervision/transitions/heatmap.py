"""What the pages draw: the transition table as rows of cells with colour classes (CSP allows no inline style,
so a cell's shade is one of eleven classes), and the persona lists as plain Korean sentences. Names come from
the taxonomy catalogue; codes stay visible underneath."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from taxonomy import catalogue

from . import counting

_STATE_ORDER = {code: i for i, code in enumerate(catalogue.CLIENT_STATE_CODES)}
_MOVE_ORDER = {code: i for i, code in enumerate(catalogue.CATEGORY_CODES + catalogue.TECHNIQUE_CODES)}
_CATEGORY_KO = {c.code: c.ko for c in catalogue.CATEGORIES}


def state_ko(code: str) -> str:
    label = catalogue.CLIENT_STATES_BY_CODE.get(code)
    return label.ko if label else code


def move_ko(code: str) -> str:
    """A move's Korean name: "관계 형성" for a category, "공감" for a technique."""
    if code in _CATEGORY_KO:
        return _CATEGORY_KO[code]
    label = catalogue.TECHNIQUES_BY_CODE.get(code)
    return label.ko if label else code


def move_phrase(code: str) -> str:
    """ "관계 형성 기법" (a category) or "'공감' 기법" (a technique), for sentences."""
    return f"{move_ko(code)} 기법" if code in _CATEGORY_KO else f"'{move_ko(code)}' 기법"


def with_ro(word: str) -> str:
    """The particle (으)로 after a Korean word: 로 after a vowel or ㄹ, 으로 after any other final consonant."""
    last = word.rstrip()[-1:] if word.strip() else ""
    if "가" <= last <= "힣":
        final = (ord(last) - 0xAC00) % 28
        return f"{word}로" if final in (0, 8) else f"{word}으로"
    return f"{word}(으)로"


def percent(p: float) -> str:
    return f"{p * 100:.0f} %"


@dataclass
class Cell:
    count: int = 0
    p: float | None = None
    low: float | None = None
    high: float | None = None
    shade: str = "p0"
    text: str = ""
    title: str = ""

    @property
    def interval(self) -> str:
        """The 95 % interval in the unit of the cell's number, percent ("21–94"; it read 0.21–0.94 under 67)."""
        if self.low is None or self.high is None:
            return ""
        return f"{self.low * 100:.0f}–{self.high * 100:.0f}"


@dataclass
class Row:
    state: str
    move: str
    support: int
    weak: bool
    cells: list[Cell] = field(default_factory=list)

    @property
    def state_ko(self) -> str:
        return state_ko(self.state)

    @property
    def move_ko(self) -> str:
        return move_ko(self.move)


def _shade(p: float) -> str:
    return f"p{min(10, round(p * 10))}"


def _diff_shade(d: float) -> str:
    level = max(-5, min(5, round(d * 10)))
    return f"d{'m' if level < 0 else ''}{abs(level)}"


def columns_of(*tables: Counter) -> list[str]:
    """The next states that occur in any of the tables, in taxonomy order."""
    seen = {nxt for counts in tables for (_s, _m, nxt) in counts}
    return sorted(seen, key=lambda code: (_STATE_ORDER.get(code, 99), code))


def rows_of(
    counts: Counter, columns: list[str], *, min_support: int, contexts: list[tuple[str, str]] | None = None
) -> list[Row]:
    """One row per context (state, move), by state then move in taxonomy order; a row whose support is below
    ``min_support`` is marked weak (the page fades it). ``contexts``: exactly these rows, in this order."""
    table = counting.by_context(counts)
    keys = contexts if contexts is not None else sorted(table, key=_context_order)
    rows = []
    for context in keys:
        following = table.get(context, Counter())
        support = sum(following.values())
        row = Row(context[0], context[1], support, weak=support < min_support)
        for code in columns:
            n = following.get(code, 0)
            if not support:
                row.cells.append(Cell(title="지지도 0"))
                continue
            low, high = counting.wilson(n, support)
            p = n / support
            row.cells.append(
                Cell(
                    count=n,
                    p=p,
                    low=low,
                    high=high,
                    shade=_shade(p),
                    text=f"{p * 100:.0f}" if n else "",
                    title=f"{state_ko(context[0])} → {move_ko(context[1])} → {state_ko(code)}: {n}/{support}건, "
                    f"{percent(p)} (95 % 구간 {low * 100:.0f}–{high * 100:.0f} %)",
                )
            )
        rows.append(row)
    return rows


def difference_rows(golden: list[Row], persona: list[Row], columns: list[str]) -> list[Row]:
    """Persona minus golden probability per cell, on the same contexts in the same order."""
    rows = []
    for ours, theirs in zip(golden, persona, strict=True):
        row = Row(ours.state, ours.move, ours.support, weak=ours.weak or theirs.weak)
        for code, a, b in zip(columns, ours.cells, theirs.cells, strict=True):
            d = (b.p or 0.0) - (a.p or 0.0)
            row.cells.append(
                Cell(
                    p=d,
                    shade=_diff_shade(d),
                    text=f"{d * 100:+.0f}" if round(d * 100) else "",
                    title=f"{state_ko(ours.state)} → {move_ko(ours.move)} → {state_ko(code)}: "
                    f"페르소나 − 실제 = {d * 100:+.0f}%p",
                )
            )
        rows.append(row)
    return rows


def _context_order(context: tuple[str, str]) -> tuple:
    state, step = context
    return (_STATE_ORDER.get(state, 99), state, _MOVE_ORDER.get(step, 99), step)


def unrealistic_sentence(item: dict) -> str:
    """ "방어 상태의 내담자가 관계 형성 기법 뒤에 곧바로 방어 완화로 넘어감: 페르소나 100 %, 실제 0 건"."""
    return (
        f"{state_ko(item['state'])} 상태의 내담자가 {move_phrase(item['move'])} 뒤에 곧바로 "
        f"{with_ro(state_ko(item['next']))} 넘어감: 페르소나 {percent(item['persona_p'])}, 실제 0 건"
    )


def missing_sentence(item: dict, golden_count: int) -> str:
    """ "방어 상태의 내담자가 관계 형성 기법 뒤에 방어 완화로 넘어가는 일이 페르소나에는 없음: 실제 40 % (4 건), 페르소나 0 건"."""
    return (
        f"{state_ko(item['state'])} 상태의 내담자가 {move_phrase(item['move'])} 뒤에 "
        f"{with_ro(state_ko(item['next']))} 넘어가는 일이 페르소나에는 없음: "
        f"실제 {percent(item['golden_p'])} ({golden_count} 건), 페르소나 0 건"
    )
