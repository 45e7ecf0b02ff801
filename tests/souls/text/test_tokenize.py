from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator

import pytest
import Stemmer

from souls.text import tokenize
from souls.text.tokenize import fts_document, fts_match, query_terms, tokens


def test_english_inflections_share_a_stem() -> None:
    assert tokens("deploys deploying deployed") == ["deploy", "deploy", "deploy"]


def test_lowercase_and_order_and_duplicates_kept() -> None:
    assert tokens("Prod PROD prod Backup") == ["prod", "prod", "prod", "backup"]


def test_possessives_and_apostrophes() -> None:
    assert tokens("John's deploy") == ["john", "deploy"]
    assert tokens("John\u2019s deploy") == ["john", "deploy"]
    assert tokens("don't") == ["dont"]
    assert tokens("O'Brien's users'") == ["obrien", "user"]


def test_numbers_are_tokens_and_punctuation_splits() -> None:
    assert tokens("v1.2 costs 8000 dollars") == ["v1", "2", "cost", "8000", "dollar"]
    assert tokens("snake_case, kebab-case; a/b") == ["snake", "case", "kebab", "case", "a", "b"]


def test_chinese_unigrams_then_bigrams() -> None:
    assert tokens("数据库迁移") == ["数", "据", "库", "迁", "移", "数据", "据库", "库迁", "迁移"]
    assert tokens("库") == ["库"]


def test_cjk_punctuation_ends_a_run() -> None:
    assert tokens("数据\uff0c迁移\u3002") == ["数", "据", "数据", "迁", "移", "迁移"]


def test_japanese_kana() -> None:
    assert tokens("デプロイ") == ["デ", "プ", "ロ", "イ", "デプ", "プロ", "ロイ"]
    assert tokens("ひらがな・カナ") == [
        *("ひ", "ら", "が", "な", "ひら", "らが", "がな"),
        *("カ", "ナ", "カナ"),
    ]
    assert tokens("ﾃﾞﾌﾟﾛｲ") == tokens("デプロイ")  # half-width kana are normalised


def test_hangul() -> None:
    assert tokens("서버 오류") == ["서", "버", "서버", "오", "류", "오류"]


def test_mixed_scripts_split_into_runs() -> None:
    assert tokens("deploy到prod失败") == ["deploy", "到", "prod", "失", "败", "失败"]
    assert tokens("Deploys到PROD") == ["deploy", "到", "prod"]


def test_other_scripts_and_normalisation() -> None:
    assert tokens("Café") == tokens("Cafe\u0301") == ["café"]
    assert tokens("\uff26\uff55\uff4c\uff4c width") == ["full", "width"]
    assert tokens("Привет мир") == ["привет", "мир"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "!!! ... ---", "。、"])
def test_nothing_to_tokenize(text: str) -> None:
    assert tokens(text) == []
    assert query_terms(text) == []
    assert fts_document(text) == ""


def test_tokens_are_safe_for_the_fts5_ascii_tokenizer() -> None:
    text = 'Hello, wörld! snake_case don\'t ${VAR} "q" 数据库 v1.2 <a@b.c> 100% ½ e\u0301'
    for token in tokens(text):
        assert token
        assert all(not ch.isascii() or ch.isalnum() for ch in token), token


def test_query_terms_drop_stopwords_and_duplicates() -> None:
    terms = query_terms("How do I fix the failing deploy? Deploys fail!")
    assert terms == ["fix", "fail", "deploy"]


def test_query_terms_stopwords_are_compared_after_stemming() -> None:
    assert query_terms("being having does") == ["be", "have", "doe"]  # all stopwords
    assert query_terms("being deployed") == ["deploy"]


def test_query_terms_all_stopwords_fall_back_to_tokens() -> None:
    assert query_terms("what is this is") == ["what", "is", "this"]


def test_fts_match_quotes_and_ors() -> None:
    assert fts_match([]) == ""
    assert fts_match(["deploy"]) == '"deploy"'
    assert fts_match(["deploy", "迁移", 'say "hi"']) == '"deploy" OR "迁移" OR "say ""hi"""'


def test_fts_document_joins_tokens() -> None:
    assert fts_document("Deploy failed: 数据") == "deploy fail 数 据 数据"


def test_stemmer_is_usable_from_several_threads() -> None:
    results: list[list[str]] = []

    def work() -> None:
        results.append(tokens("deploying failures " * 50))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [tokens("deploying failures " * 50)] * 4


DOCS = [
    "数据库迁移超时",
    "Deploy failure on prod",
    "The cat's breakfast was late again",
    "部署到生产环境成功",
    "John's backup of the database finished",
]


@pytest.fixture
def fts() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(doc, tokenize='ascii')")
    db.executemany(
        "INSERT INTO docs (rowid, doc) VALUES (?, ?)",
        [(i, fts_document(text)) for i, text in enumerate(DOCS)],
    )
    yield db
    db.close()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("迁移", "数据库迁移超时"),
        ("数据库超时了", "数据库迁移超时"),
        ("deployment failed", "Deploy failure on prod"),
        ("PROD", "Deploy failure on prod"),
        ("cats", "The cat's breakfast was late again"),
        ("john backups", "John's backup of the database finished"),
        ("生产环境", "部署到生产环境成功"),
    ],
)
def test_fts5_round_trip(fts: sqlite3.Connection, query: str, expected: str) -> None:
    match = fts_match(query_terms(query))
    rows = fts.execute(
        "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 1", (match,)
    ).fetchall()
    assert [DOCS[rowid] for (rowid,) in rows] == [expected]


def test_fts5_reads_documents_back_as_the_same_tokens(fts: sqlite3.Connection) -> None:
    fts.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, 'row')")
    indexed = {term for (term,) in fts.execute("SELECT term FROM vocab")}
    assert indexed == {token for text in DOCS for token in tokens(text)}


def test_stem_memo_is_bounded_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "deploys deploying deployed 2026 databases running ran 42 runs quickly"
    expected = Stemmer.Stemmer("english").stemWords(text.split())
    monkeypatch.setattr(tokenize, "_MEMO", {})
    monkeypatch.setattr(tokenize, "_MEMO_WORDS", 3)
    for _ in range(3):  # cold, warm, and emptied on the way
        assert tokens(text) == expected
        assert len(tokenize._MEMO) <= 3
        assert not any(word.isdigit() for word in tokenize._MEMO)
