"""Text the simulated model says: original prose about displaying streamed text.

Kept apart from ``streampace.sim.scenarios`` so the generator logic stays readable.  The
emoji and combining sequences are spelled with escapes because the characters
that glue clusters together (ZWJ, VS16, combining accents, conjoining jamo) are
invisible in an editor; ``EMOJI`` names every one of them so tests can check
that each kind really occurs and really gets split across deltas.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EMOJI",
    "EN_PARAGRAPHS",
    "EN_BLOCKS",
    "HEADINGS",
    "FR_LINES",
    "JA_LINES",
    "ZH_LINES",
    "KO_LINES",
    "MIXED_LINES",
    "REASONING_LINES",
    "PREAMBLE_LINES",
    "FOLLOW_UP_LINES",
    "TOOL_QUERIES",
    "TOOL_SOURCES",
]

ZWJ: Final = "\u200d"
VS16: Final = "\ufe0f"

# Multi-code-point clusters, by the kind of glue that holds them together.
EMOJI: Final[dict[str, str]] = {
    "tech": "\U0001f469" + ZWJ + "\U0001f4bb",  # woman technologist (ZWJ)
    "family": ZWJ.join(["\U0001f468", "\U0001f469", "\U0001f467", "\U0001f466"]),  # ZWJ x3
    "rainbow": "\U0001f3f3" + VS16 + ZWJ + "\U0001f308",  # rainbow flag (VS16 + ZWJ)
    "jp": "\U0001f1ef\U0001f1f5",  # flag: regional indicator pair
    "kr": "\U0001f1f0\U0001f1f7",
    "fr": "\U0001f1eb\U0001f1f7",
    "cn": "\U0001f1e8\U0001f1f3",
    "thumbs": "\U0001f44d\U0001f3fd",  # skin tone modifier
    "wave": "\U0001f44b\U0001f3fb",
    "heart": "\u2764" + VS16,  # text-default symbol made emoji by VS16
    "check": "\u2714" + VS16,
    "e_acute": "e\u0301",  # decomposed é: base + combining acute
    "han": "\u1112\u1161\u11ab",  # decomposed Hangul 한: L + V + T jamo
    "geul": "\u1100\u1173\u11af",  # decomposed Hangul 글
    "scotland": "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "keycap": "1" + VS16 + "\u20e3",  # keycap one
}
_E = EMOJI

EN_PARAGRAPHS: Final[tuple[str, ...]] = (
    "A language model does not write a page; it drips one. The words arrive in small pieces, "
    "sometimes three in a heartbeat and sometimes none for half a second. What the reader sees "
    "is decided by the code that sits between the socket and the screen.",
    "The simplest approach paints every piece the moment it lands. On a fast connection that "
    "looks fine, but a provider that batches its output turns the answer into a series of "
    "jumps, and the eye notices every one of them.",
    "A pacer keeps a small backlog of text that has arrived but is not shown yet. On each "
    "animation frame it reveals a slice of that backlog, and the size of the slice grows when "
    "the backlog grows. The reader sees a steady flow instead of a staircase.",
    "The hard part is not smoothness but honesty. A pacer that hides text for too long is "
    "lying about how fast the model really is, so the delay must stay short and bounded. When "
    "the backlog runs away, the right move is to catch up at once.",
    "Some events are not text at all. When a message ends, when a run finishes or when the "
    "server sends a snapshot, everything before that point must be visible immediately. "
    "Animating past a barrier would show a state that no longer exists.",
    "Slicing text is trickier than it looks. A single visible character can be made of several "
    "code points, and cutting between them shows a broken glyph for one frame. Grapheme "
    "clusters are the only safe unit for a reveal.",
    "Providers do not care about grapheme clusters. A family emoji can arrive as two deltas, "
    "the first ending right after a zero width joiner, and a careful renderer waits a moment "
    "for the rest before it shows anything.",
    "Frame budgets are small. At sixty frames per second there are about sixteen milliseconds "
    "for everything, so the pacer must do constant work per frame and touch the document "
    "once, not once per token.",
    "Appending to a text node costs time proportional to the new text. Replacing the whole "
    "message on every token costs time proportional to everything shown so far, which turns a "
    "long answer into quadratic work and a warm laptop.",
    "A background tab gets no animation frames at all. If the pacer only ran on frames, the "
    "answer would freeze while the user looks elsewhere and then jump forward on return. A "
    "slow fallback timer keeps the text moving in the dark.",
    "Reconnects are a fact of life on mobile networks. The client remembers the last event it "
    "saw, the server replays what came after, and nothing is lost or shown twice. The pacer "
    "simply continues from where the text stands.",
    "Tool calls and reasoning deserve their own treatment. Arguments stream in as fragments of "
    "JSON that only make sense once complete, and a reasoning trace is useful as a compact "
    "summary while the real answer takes the spotlight.",
    "Good defaults matter more than knobs. A time constant of a quarter second, a floor of "
    "twenty characters per second and a ceiling of eight hundred cover nearly every model in "
    "use today without any tuning.",
    "Measuring smoothness needs numbers rather than impressions. Useful ones are the lag "
    "between arrival and display, the longest freeze while text is waiting, and the largest "
    "number of characters revealed in a single frame.",
    "The fastest possible display is not the goal; a faithful one is. If the model pauses to "
    "think, the screen may pause too. The pacer should smooth the noise of the network without "
    "inventing a rhythm the model never had.",
    "Accessibility changes the rules. Someone who asked for reduced motion gets each batch as "
    "it arrives, and screen readers should hear the finished message rather than a stream of "
    "half words.",
    "Selection must keep working while text streams. If the renderer rebuilds nodes on every "
    "frame, the reader loses the sentence they were trying to copy, which is a small but very "
    "real frustration.",
    "Server side buffering and client side pacing solve different problems. The buffer groups "
    "tiny deltas so the socket is not flooded with messages, and the pacer spreads the grouped "
    "text back out over time.",
    "A long answer tests memory as much as speed. Fifty thousand characters should stream with "
    "the same cost per frame as five hundred, and the backlog must never hold more than a few "
    "seconds of text.",
    "A huge paste is the opposite extreme. Ten thousand characters arrive in one delta, and "
    "animating them would take ages, so the pacer treats the flood as an overload and shows it "
    "at once.",
    "Testing a pacer on a real clock is a recipe for flaky builds. A virtual clock that only "
    "moves when the test says so makes every frame reproducible and every assertion exact.",
    "Running the pacer as Python inside the page means the same code is tested on the host and "
    "shipped to the browser. The only browser specific parts are the frame clock, the "
    "segmenter and the document writes.",
    "Deterministic traces make comparisons fair. Every strategy sees the same arrivals at the "
    "same moments, so a difference in the results comes from the strategy and not from luck.",
    "Bursty providers are common. Some gateways collect sixty or eighty tokens and forward them "
    "together every few hundred milliseconds, which a naive renderer shows as a jerky crawl.",
    "Jitter has a heavy tail. Most gaps between deltas are short, a few are long, and once in "
    "a while the connection stalls for a second or two before everything arrives together.",
    "Mixed scripts are normal in real conversations. An answer can switch from English to "
    "Japanese, quote a French phrase and end with a flag, and every one of those must survive "
    "the trip intact.",
    "Order is sacred. Text, tool results and status changes must appear in the order the "
    "server sent them, even when text is held back for pacing and other events could be "
    "shown sooner.",
    "The terminal state must always be reached. Whatever happens to the connection or the "
    "animation, a finished run ends with every character visible and the busy indicator "
    "cleared.",
    "Cost matters on small devices. A pacer that burns a millisecond of script time per frame "
    "is fine on a desktop and painful on an old phone, so the work per frame must stay tiny.",
    "Freshness comes first. Smoothing is a service offered while the backlog is small; when "
    "the model finishes or the backlog grows too large, the pacer steps aside and shows the "
    "truth.",
)

# Multi-line markdown blocks; streamed whole, never recombined.
EN_BLOCKS: Final[tuple[str, ...]] = (
    "Three numbers describe most of the behaviour:\n\n"
    "- **time constant**: how quickly the backlog drains, about 250 ms\n"
    "- **minimum rate**: the slowest reveal, 20 graphemes per second\n"
    "- **maximum rate**: the fastest reveal, 800 graphemes per second",
    "A minimal frame loop looks like this:\n\n"
    "```python\n"
    "def on_frame(now):\n"
    "    budget = rate(backlog) * (now - last)\n"
    "    reveal(take_graphemes(budget))\n"
    "    request_frame(on_frame)\n"
    "```",
    "When to stop animating:\n\n"
    "1. the message ended\n"
    "2. the run finished or failed\n"
    "3. a snapshot replaced the state\n"
    "4. the backlog passed the overload limit",
    "| event | paced? |\n"
    "|---|---|\n"
    "| `TEXT_MESSAGE_CONTENT` | yes |\n"
    "| `TOOL_CALL_ARGS` | no |\n"
    "| `RUN_FINISHED` | flushes everything |",
    "Checklist for a renderer " + _E["check"] + "\n\n"
    "- insert text as text, never as markup\n"
    "- one document update per frame\n"
    "- keep the selection alive\n"
    "- release every callback on close",
)

HEADINGS: Final[tuple[str, ...]] = (
    "## Why pacing matters",
    "## Grapheme boundaries",
    "## Barriers and order",
    "## Measuring what the eye sees",
    "## Networks and reconnects",
    "## Cost per frame",
    "### A closer look",
    "### In practice",
)

FR_LINES: Final[tuple[str, ...]] = (
    "En fran\u00e7ais : le texte arrive par petits morceaux, et l'\u00e9cran doit rester fluide.",
    "Une r\u00e9ponse bien rythm\u00e9e se lit comme une phrase dite \u00e0 voix haute.",
    "Le d"
    + _E["e_acute"]
    + "lai reste court ; la fid"
    + _E["e_acute"]
    + "lit"
    + _E["e_acute"]
    + " passe avant l'"
    + _E["e_acute"]
    + "l"
    + _E["e_acute"]
    + "gance.",
    "Voil\u00e0 pourquoi on ne coupe jamais un caract\u00e8re en deux " + _E["fr"] + ".",
    "Ce qui compte, c'est l'exp" + _E["e_acute"] + "rience du lecteur, pas la vitesse brute.",
)

JA_LINES: Final[tuple[str, ...]] = (
    "ストリーミング表示では、文字が少しずつ届きます。",
    "画面は毎フレーム少しだけ更新されるので、読みやすさが保たれます。",
    "絵文字や結合文字を途中で切ると、一瞬だけ壊れた文字が見えてしまいます。",
    "日本語の文章でも、書記素クラスタ単位で表示するのが安全です" + _E["jp"] + "。",
    "開発者" + _E["tech"] + "は、遅延と滑らかさのバランスを測定します。",
    "回答が終わったら、残りのテキストはすぐにすべて表示されます。",
)

ZH_LINES: Final[tuple[str, ...]] = (
    "流式输出的文字是一点一点到达的，界面需要保持平稳。",
    "每一帧只更新一次页面，成本才不会随着答案变长而增加。",
    "表情符号和组合字符不能被拆开显示" + _E["cn"] + "。",
    "当运行结束时，所有剩余的文字都会立刻出现。",
    "好的节奏让读者感觉模型在自然地说话" + _E["thumbs"] + "。",
)

KO_LINES: Final[tuple[str, ...]] = (
    "스트리밍 텍스트는 조금씩 도착하고, 화면은 매 프레임 부드럽게 갱신됩니다.",
    "생성이 진행 중이고 백로그가 작을 때만 부드럽게 보여 줍니다.",
    "정확성과 최신성이 먼저이고, 부드러움은 그다음입니다" + _E["kr"] + ".",
    _E["han"] + _E["geul"] + "처럼 분해된 자모도 한 글자로 보여야 합니다.",
    "메시지가 끝나면 남은 글자는 바로 모두 표시됩니다 " + _E["heart"] + ".",
)

# Lines that pack several cluster kinds together, for the CJK + emoji scenario.
MIXED_LINES: Final[tuple[str, ...]] = (
    "チーム" + _E["family"] + "で表示テスト中です " + _E["thumbs"] + "。",
    "家族"
    + _E["family"]
    + "、开发者"
    + _E["tech"]
    + "、国旗"
    + _E["jp"]
    + _E["kr"]
    + _E["cn"]
    + "都要完整显示。",
    "오늘의 테스트 " + _E["tech"] + " 결과: 깨진 글자 없음 " + _E["check"] + ".",
    "Caf" + _E["e_acute"] + " で " + _E["heart"] + " を送ります " + _E["wave"] + "。",
    "旗" + _E["scotland"] + "と" + _E["rainbow"] + "も一つの文字です。",
    _E["keycap"] + " 一行目：" + _E["han"] + _E["geul"] + " と 한글 は同じに見えるべきです。",
    "ありがとう " + _E["thumbs"] + " 감사합니다 " + _E["wave"] + " 谢谢 " + _E["heart"],
    "Résumé, re" + _E["e_acute"] + "sume" + _E["e_acute"] + ", 履歴書, 이력서 " + _E["tech"] + ".",
)

REASONING_LINES: Final[tuple[str, ...]] = (
    "The user wants to understand how streamed text can look smooth without lagging.",
    "I should explain the backlog idea first, then barriers, then grapheme safety.",
    "It would help to check the project notes for the default constants before answering.",
    "Mixed scripts matter here, so the answer should include a few non-English lines.",
    "I will keep the explanation concrete and end with a short checklist.",
    "The reader probably cares about cost on slow devices too, so mention frame budgets.",
    "Let me make sure the numbers I quote match the documented defaults.",
    "A small table of which events are paced would make the rules easy to scan.",
)

PREAMBLE_LINES: Final[tuple[str, ...]] = (
    "Let me look that up in the project notes first " + _E["tech"] + ".",
    "I'll check the documented defaults before answering.",
    "One moment, I'm searching the notes for the relevant details.",
)

FOLLOW_UP_LINES: Final[tuple[str, ...]] = (
    "The notes confirm the defaults, so here is the short version.",
    "I found two relevant sections; the second one answers the question directly.",
    "According to the notes, the backlog decides the speed and barriers decide when to stop.",
    "If you want, I can also show how the numbers change for a very fast model " + _E["wave"] + ".",
)

TOOL_QUERIES: Final[tuple[str, ...]] = (
    "default pacing constants",
    "grapheme safe reveal",
    "barrier events flush",
    "background tab fallback timer",
    "reconnect resume protocol",
)

TOOL_SOURCES: Final[tuple[tuple[str, str], ...]] = (
    ("notes/pacing.md", "The backlog drains with a time constant of about 250 ms."),
    ("notes/graphemes.md", "Reveal only whole grapheme clusters; hold a split cluster briefly."),
    ("notes/barriers.md", "Message end, run end and snapshots show all pending text at once."),
    ("notes/hidden-tab.md", "A fallback timer keeps draining while no frames arrive."),
    ("notes/resume.md", "Clients resume after the last sequence number they saw."),
    (
        "notes/cjk.md",
        "日本語・中文・한국어 " + _E["jp"] + _E["cn"] + _E["kr"] + " all stream alike.",
    ),
)
