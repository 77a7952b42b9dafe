"""The DOM labeller of the corpus builder on small pages in the style of each generator: the
text is unchanged, and the boilerplate spans are exactly the text from outside the main
content."""
from __future__ import annotations

import sys

import pytest

from tests.benchmarks.conftest import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS / "corpora"))
import html2jsonl  # noqa: E402

SPHINX = """<html><head><title>json — Python 3.11 documentation</title>
<script>var x = 1;</script></head><body>
<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a>index</a></li>
<li><a>modules</a> |</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main"><section><h1>json — JSON encoder</h1>
<p>JSON is a lightweight data interchange format.</p><div class="highlight"><pre>
&gt;&gt;&gt; import json
</pre></div></section><div class="clearer"></div></div></div></div>
<div class="sphinxsidebar"><h4>Previous topic</h4><p>mailbox</p></div></div>
<div class="footer">&copy; Copyright 2001-2026, Python Software Foundation.</div>
</body></html>"""

JAVADOC = """<!DOCTYPE HTML><html><head><title>ArrayList (Java SE 17)</title></head>
<body><noscript><div>JavaScript is disabled on your browser.</div></noscript>
<div class="flex-box"><header role="banner"><nav role="navigation"><ul>
<li>Overview</li><li>Package</li></ul></nav></header><div class="flex-content">
<main role="main"><div class="header"><h1>Class ArrayList&lt;E&gt;</h1></div>
<section><p>Resizable-array implementation of the List interface.</p></section></main>
<footer role="contentinfo"><p>Report a bug or suggest an enhancement</p></footer>
</div></div></body></html>"""

DOCBOOK = """<html><head><title>SELECT</title></head><body>
<div class="navheader"><table><tr><th>SELECT</th></tr><tr><td><a>Prev</a></td>
<td><a>Up</a></td></tr></table><hr /></div>
<div class="refentry"><div class="refnamediv"><h2>SELECT</h2>
<p>SELECT, TABLE, WITH — retrieve rows from a table or view</p></div>
<div class="toc"><p>Table of Contents</p></div></div>
<div class="navfooter"><table><tr><td>SECURITY LABEL</td><td><a>Home</a></td></tr></table>
</div></body></html>"""

INLINE = """<html><body><p>Intro <span role="main">core <b>words</b></span> outro</p>
<p>after</p></body></html>"""

PLAIN = "<html><body><h1>No marker</h1><p>Nothing says what is main here.</p></body></html>"


def _labelled(tmp_path, html):
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    text, spans = html2jsonl.html_to_labelled_text(str(page))
    assert text == html2jsonl.html_to_text(str(page))  # the text is unchanged
    return text, spans


def _pieces(text, spans):
    return [text[s:e] for s, e in spans]


def test_sphinx_body_is_content_the_rest_is_boilerplate(tmp_path):
    text, spans = _labelled(tmp_path, SPHINX)
    assert _pieces(text, spans) == [
        "json — Python 3.11 documentation\nNavigation\nindex\nmodules |",
        "Previous topic\nmailbox\n© Copyright 2001-2026, Python Software Foundation."]
    assert "JSON is a lightweight data interchange format." in text


def test_javadoc_main_element(tmp_path):
    text, spans = _labelled(tmp_path, JAVADOC)
    assert _pieces(text, spans) == [
        "ArrayList (Java SE 17)\nJavaScript is disabled on your browser.\nOverview\nPackage",
        "Report a bug or suggest an enhancement"]


def test_docbook_navigation_and_title(tmp_path):
    text, spans = _labelled(tmp_path, DOCBOOK)
    assert _pieces(text, spans) == ["SELECT\nSELECT\nPrev\nUp", "SECURITY LABEL\nHome"]
    content = text[spans[0][1]:spans[1][0]]
    assert "retrieve rows" in content and "Table of Contents" in content


def test_a_main_element_inside_a_line(tmp_path):
    text, spans = _labelled(tmp_path, INLINE)
    assert text == "Intro core words outro\nafter"
    assert _pieces(text, spans) == ["Intro", "outro\nafter"]


def test_a_page_without_a_marker_is_unlabelled(tmp_path):
    assert _labelled(tmp_path, PLAIN)[1] is None


@pytest.mark.parametrize("html", [SPHINX, JAVADOC, DOCBOOK])
def test_every_boilerplate_character_is_outside_the_main_text(tmp_path, html):
    text, spans = _labelled(tmp_path, html)
    inside = [False] * len(text)
    for start, end in spans:
        assert text[start].strip() and text[end - 1].strip()
        for i in range(start, end):
            inside[i] = True
    main_words = {"lightweight", "Resizable-array", "retrieve"}
    for word in main_words:
        at = text.find(word)
        if at >= 0:
            assert not any(inside[at:at + len(word)])
