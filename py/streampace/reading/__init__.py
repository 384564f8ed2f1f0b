"""What a screen reader hears of a streamed answer (sans-IO: no js, no clock of its own).

`sentences` finds where a sentence ends in streamed text, `spoken` turns a
Markdown block into what is said of it (code, tables and math as one short
summary), `announcer.Announcer` decides when to say it (sentence ends, block
ends, pauses) and `outline.HeadingOutline` maps an answer's heading levels
under the host page's outline. The browser side is browser/announce.py.
"""
