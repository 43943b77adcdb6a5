"""Every parsed language: a method call on a receiver no evidence types never binds to
one of the methods sharing its name; it stays a name match to each of them, while the
same call on a receiver of a known type binds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from index_fixtures import index

# language -> (files, caller with an unknown receiver, caller with a typed one, the
# two same-named methods, the one the typed call means)
CASES: dict[str, tuple[dict[str, str], str, str, set[str], str]] = {
    "javascript": (
        {
            "web/shapes.js": (
                "export class Circle { frob() {} }\nexport class Square { frob() {} }\n"
                "export function blind(x) { x.frob(); }\n"
                "export function typed() { const c = new Circle(); c.frob(); }\n"
            )
        },
        "web/shapes.js::blind",
        "web/shapes.js::typed",
        {"web/shapes.js::Circle.frob", "web/shapes.js::Square.frob"},
        "web/shapes.js::Circle.frob",
    ),
    "typescript": (
        {
            "web/shapes.ts": (
                "export class Circle { frob(): void {} }\n"
                "export class Square { frob(): void {} }\n"
                "export function blind(x: any) { x.frob(); }\n"
                "export function typed(s: Square) { s.frob(); }\n"
            )
        },
        "web/shapes.ts::blind",
        "web/shapes.ts::typed",
        {"web/shapes.ts::Circle.frob", "web/shapes.ts::Square.frob"},
        "web/shapes.ts::Square.frob",
    ),
    "go": (
        {
            "shapes/shapes.go": (
                "package shapes\n\ntype Circle struct{}\ntype Square struct{}\n\n"
                "func (c *Circle) Frob() {}\n\nfunc (s *Square) Frob() {}\n\n"
                "func Blind(x interface{ Frob() }) {\n\tx.Frob()\n}\n\n"
                "func Typed() {\n\tc := &Circle{}\n\tc.Frob()\n}\n"
            )
        },
        "shapes/shapes.go::Blind",
        "shapes/shapes.go::Typed",
        {"shapes/shapes.go::Circle.Frob", "shapes/shapes.go::Square.Frob"},
        "shapes/shapes.go::Circle.Frob",
    ),
    "rust": (
        {
            "src/lib.rs": (
                "pub struct Circle;\npub struct Square;\n\n"
                "impl Circle {\n    pub fn frob(&self) {}\n}\n\n"
                "impl Square {\n    pub fn frob(&self) {}\n}\n\n"
                "pub fn blind<T: Frobber>(x: T) {\n    x.frob();\n}\n\n"
                "pub fn typed() {\n    let s = Square::new();\n    Square::frob(&s);\n}\n"
            )
        },
        "src/lib.rs::blind",
        "src/lib.rs::typed",
        {"src/lib.rs::Circle.frob", "src/lib.rs::Square.frob"},
        "src/lib.rs::Square.frob",
    ),
    "java": (
        {
            "src/shapes/Circle.java": "package shapes;\n\npublic class Circle {\n    public void frob() {}\n}\n",
            "src/shapes/Square.java": "package shapes;\n\npublic class Square {\n    public void frob() {}\n}\n",
            "src/shapes/Use.java": (
                "package shapes;\n\npublic class Use {\n"
                "    void blind(Object x) {\n        x.frob();\n    }\n"
                "    void typed() {\n        Circle c = new Circle();\n        c.frob();\n    }\n"
                "}\n"
            ),
        },
        "src/shapes/Use.java::Use.blind",
        "src/shapes/Use.java::Use.typed",
        {"src/shapes/Circle.java::Circle.frob", "src/shapes/Square.java::Square.frob"},
        "src/shapes/Circle.java::Circle.frob",
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_an_unknown_receiver_never_binds_and_a_typed_one_does(
    make_repo: Callable[..., Path], language: str
) -> None:
    files, blind, typed, methods, meant = CASES[language]
    _, graph = index(make_repo(files))
    out_of = {
        (e.kind, e.dst) for e in graph.edges if e.src == blind and e.kind in ("calls", "name_match")
    }
    assert out_of == {("name_match", m) for m in methods}
    typed_calls = {e.dst for e in graph.edges if e.src == typed and e.kind == "calls"}
    assert meant in typed_calls and not (methods - {meant}) & typed_calls
