"""JavaScript, TypeScript/TSX, Go, Rust and Java: exact symbols, imports, calls, bases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index_fixtures import edge_set, index, node_ids

from coderooms.focus.graph import CodeGraph

JS = {
    "web/util.js": """// Adds numbers.
export function add(a, b) {
  return a + b;
}
export const double = (x) => add(x, x);
""",
    "web/app.js": """import { add, double as twice } from "./util";
const fs = require("fs");
const lib = require("./lib");

class Base {
  hello() { return "hi"; }
}

export class App extends Base {
  run() {
    this.hello();
    lib.helper();
    fs.readFileSync("x");
    return twice(add(1, 2));
  }
}
""",
    "web/lib.js": "function helper() { return 1; }\nmodule.exports = { helper };\n",
    "web/app.test.js": 'import { App } from "./app";\ntest("runs", () => { new App().run(); });\n',
}

TS = {
    "web/shapes.ts": """export interface Shape {
  area(): number;
}
/** A square. */
export class Square implements Shape {
  constructor(private side: number) {}
  area(): number { return square(this.side); }
}
function square(x: number): number { return x * x; }
export namespace Geometry { export function unit(): Square { return new Square(1); } }
""",
    "web/view.tsx": """import { Square } from "./shapes";
export function View() {
  const s = new Square(2);
  return <div>{s.area()}</div>;
}
""",
}

GO = {
    "go/go.mod": "module example.com/demo\n",
    "go/main.go": """package main

import (
\t"fmt"
\t"example.com/demo/util"
)

// Server serves.
type Server struct{}

func (s *Server) Start() {
\ts.listen()
\tutil.Log("start")
\tfmt.Println("x")
}

func (s *Server) listen() {}

func main() {
\tsrv := &Server{}
\tsrv.Start()
}
""",
    "go/util/log.go": "package util\n\nfunc Log(msg string) { write(msg) }\n\nfunc write(msg string) {}\n",
    "go/util/log_test.go": 'package util\n\nimport "testing"\n\nfunc TestLog(t *testing.T) { Log("x") }\n',
}

RUST = {
    "rs/src/lib.rs": """mod net;
use crate::net::client::{connect, Client as C};

pub trait Greet { fn greet(&self) -> String; }

pub struct Bot;

impl Greet for Bot {
    fn greet(&self) -> String { self.name() }
}

impl Bot {
    fn name(&self) -> String { connect(); C::new(); String::new() }
}

#[cfg(test)]
mod tests {
    #[test]
    fn works() { super::Bot; }
}
""",
    "rs/src/net/mod.rs": "pub mod client;\n",
    "rs/src/net/client.rs": """pub struct Client;
impl Client {
    pub fn new() -> Client { Client }
}
pub fn connect() { helper() }
fn helper() {}
""",
}

JAVA = {
    "java/com/acme/util/Strings.java": """package com.acme.util;

public class Strings {
    public static String trim(String s) { return s.trim(); }
}
""",
    "java/com/acme/App.java": """package com.acme;

import com.acme.util.Strings;

/** The app. */
public class App extends Base implements Runnable {
    public void run() {
        Strings.trim(" x ");
        helper();
        new Strings();
    }
    private void helper() {}
}
""",
    "java/com/acme/Base.java": "package com.acme;\n\npublic abstract class Base {}\n",
    "java/com/acme/AppTest.java": """package com.acme;

public class AppTest {
    @Test
    public void runs() { new App().run(); }
}
""",
}


def non_contains(graph: CodeGraph) -> set[tuple[str, str, str]]:
    return {e for e in edge_set(graph) if e[0] != "contains"}


def test_javascript(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(JS))
    assert node_ids(graph) - node_ids(graph, "file") == {
        "web/util.js::add",
        "web/util.js::double",
        "web/app.js::Base",
        "web/app.js::Base.hello",
        "web/app.js::App",
        "web/app.js::App.run",
        "web/lib.js::helper",
    }
    add = graph.node("web/util.js::add")
    assert (
        add is not None
        and add.docstring == "Adds numbers."
        and add.signature == "function add(a, b)"
    )
    assert non_contains(graph) == {
        ("imports", "web/app.js", "web/util.js"),
        ("imports", "web/app.js", "web/lib.js"),
        ("imports", "web/app.test.js", "web/app.js"),
        ("calls", "web/util.js::double", "web/util.js::add"),
        ("calls", "web/app.js::App.run", "web/app.js::Base.hello"),  # this.hello(), inherited
        ("calls", "web/app.js::App.run", "web/lib.js::helper"),  # through require
        ("calls", "web/app.js::App.run", "web/util.js::add"),
        ("calls", "web/app.js::App.run", "web/util.js::double"),  # imported under an alias
        ("calls", "web/app.test.js", "web/app.js::App"),
        ("calls", "web/app.test.js", "web/app.js::App.run"),  # new App().run()
        ("inherits", "web/app.js::App", "web/app.js::Base"),
        ("tests", "web/app.test.js", "web/app.js"),
        ("tests", "web/app.test.js", "web/app.js::App"),
        ("tests", "web/app.test.js", "web/app.js::App.run"),
    }
    assert {n.id for n in graph.nodes if n.is_test} == {"web/app.test.js"}
    # Named after app.js and importing it: two reasons for the same tests edge.
    (named,) = [
        e
        for e in graph.edges
        if (e.kind, e.src, e.dst) == ("tests", "web/app.test.js", "web/app.js")
    ]
    assert named.weight == 2.0


def test_typescript_and_tsx(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(TS))
    kinds = {n.id: n.kind for n in graph.nodes}
    assert kinds == {
        "web/shapes.ts": "file",
        "web/view.tsx": "file",
        "web/shapes.ts::Shape": "class",
        "web/shapes.ts::Shape.area": "method",
        "web/shapes.ts::Square": "class",
        "web/shapes.ts::Square.constructor": "method",
        "web/shapes.ts::Square.area": "method",
        "web/shapes.ts::square": "function",
        "web/shapes.ts::Geometry": "module",
        "web/shapes.ts::Geometry.unit": "function",
        "web/view.tsx::View": "function",
    }
    assert {n.language for n in graph.nodes if n.path == "web/view.tsx"} == {"tsx"}
    square = graph.node("web/shapes.ts::Square")
    assert square is not None and square.docstring == "A square."
    assert non_contains(graph) == {
        ("imports", "web/view.tsx", "web/shapes.ts"),
        ("calls", "web/shapes.ts::Square.area", "web/shapes.ts::square"),
        ("calls", "web/shapes.ts::Geometry.unit", "web/shapes.ts::Square"),
        ("calls", "web/view.tsx::View", "web/shapes.ts::Square"),
        ("calls", "web/view.tsx::View", "web/shapes.ts::Square.area"),  # s = new Square(2)
        ("inherits", "web/shapes.ts::Square", "web/shapes.ts::Shape"),
    }


def test_go(make_repo: Callable[..., Path]) -> None:
    ws, graph = index(make_repo(GO))
    assert node_ids(graph) - node_ids(graph, "file") == {
        "go/main.go::Server",
        "go/main.go::Server.Start",
        "go/main.go::Server.listen",
        "go/main.go::main",
        "go/util/log.go::Log",
        "go/util/log.go::write",
        "go/util/log_test.go::TestLog",
    }
    start = graph.node("go/main.go::Server.Start")
    assert start is not None and start.kind == "method" and start.parent == "go/main.go::Server"
    server = graph.node("go/main.go::Server")
    assert server is not None and server.docstring == "Server serves."
    assert non_contains(graph) == {
        ("imports", "go/main.go", "go/util/log.go"),
        ("calls", "go/main.go::Server.Start", "go/main.go::Server.listen"),
        ("calls", "go/main.go::Server.Start", "go/util/log.go::Log"),  # package-qualified
        ("calls", "go/main.go::main", "go/main.go::Server.Start"),
        ("calls", "go/util/log.go::Log", "go/util/log.go::write"),
        ("calls", "go/util/log_test.go::TestLog", "go/util/log.go::Log"),
        ("tests", "go/util/log_test.go", "go/util/log.go"),
        ("tests", "go/util/log_test.go::TestLog", "go/util/log.go::Log"),
    }
    assert ws.summary().unresolved["external"] == 1  # fmt.Println


def test_rust(make_repo: Callable[..., Path]) -> None:
    ws, graph = index(make_repo(RUST))
    kinds = {n.id: n.kind for n in graph.nodes if n.kind != "file"}
    assert kinds == {
        "rs/src/lib.rs::Greet": "class",
        "rs/src/lib.rs::Greet.greet": "method",
        "rs/src/lib.rs::Bot": "class",
        "rs/src/lib.rs::Bot.greet": "method",
        "rs/src/lib.rs::Bot.name": "method",
        "rs/src/lib.rs::tests": "module",
        "rs/src/lib.rs::tests.works": "function",
        "rs/src/net/client.rs::Client": "class",
        "rs/src/net/client.rs::Client.new": "method",
        "rs/src/net/client.rs::connect": "function",
        "rs/src/net/client.rs::helper": "function",
    }
    assert {n.id for n in graph.nodes if n.is_test} == {
        "rs/src/lib.rs::tests",
        "rs/src/lib.rs::tests.works",
    }
    assert non_contains(graph) == {
        ("imports", "rs/src/lib.rs", "rs/src/net/mod.rs"),  # mod net;
        ("imports", "rs/src/lib.rs", "rs/src/net/client.rs"),  # use crate::net::client::…
        ("imports", "rs/src/net/mod.rs", "rs/src/net/client.rs"),
        ("calls", "rs/src/lib.rs::Bot.greet", "rs/src/lib.rs::Bot.name"),
        ("calls", "rs/src/lib.rs::Bot.name", "rs/src/net/client.rs::connect"),
        (
            "calls",
            "rs/src/lib.rs::Bot.name",
            "rs/src/net/client.rs::Client.new",
        ),  # C::new via alias
        ("calls", "rs/src/net/client.rs::connect", "rs/src/net/client.rs::helper"),
        ("inherits", "rs/src/lib.rs::Bot", "rs/src/lib.rs::Greet"),
    }
    assert ws.summary().unresolved["unknown"] == 1  # String::new is outside the repository


def test_java(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(JAVA))
    assert node_ids(graph) - node_ids(graph, "file") == {
        "java/com/acme/util/Strings.java::Strings",
        "java/com/acme/util/Strings.java::Strings.trim",
        "java/com/acme/App.java::App",
        "java/com/acme/App.java::App.run",
        "java/com/acme/App.java::App.helper",
        "java/com/acme/Base.java::Base",
        "java/com/acme/AppTest.java::AppTest",
        "java/com/acme/AppTest.java::AppTest.runs",
    }
    app = graph.node("java/com/acme/App.java::App")
    assert app is not None and app.docstring == "The app."
    assert non_contains(graph) == {
        ("imports", "java/com/acme/App.java", "java/com/acme/util/Strings.java"),
        (
            "calls",
            "java/com/acme/App.java::App.run",
            "java/com/acme/util/Strings.java::Strings.trim",
        ),
        ("calls", "java/com/acme/App.java::App.run", "java/com/acme/App.java::App.helper"),
        ("calls", "java/com/acme/App.java::App.run", "java/com/acme/util/Strings.java::Strings"),
        ("calls", "java/com/acme/AppTest.java::AppTest.runs", "java/com/acme/App.java::App"),
        ("calls", "java/com/acme/AppTest.java::AppTest.runs", "java/com/acme/App.java::App.run"),
        (
            "inherits",
            "java/com/acme/App.java::App",
            "java/com/acme/Base.java::Base",
        ),  # same package
        ("tests", "java/com/acme/AppTest.java", "java/com/acme/App.java"),
        ("tests", "java/com/acme/AppTest.java::AppTest.runs", "java/com/acme/App.java::App"),
        ("tests", "java/com/acme/AppTest.java::AppTest.runs", "java/com/acme/App.java::App.run"),
    }
    assert {n.id for n in graph.nodes if n.is_test} == {
        "java/com/acme/AppTest.java",
        "java/com/acme/AppTest.java::AppTest",
        "java/com/acme/AppTest.java::AppTest.runs",
    }


def test_duplicate_names_across_languages_keep_distinct_ids(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "a.js": "function f() {}\nfunction f() {}\n",
            "b.go": "package b\n\nfunc g() {}\n",
            "c.rs": "struct S;\nimpl S { fn m(&self) {} }\nimpl S { fn m(&self) {} }\n",
        }
    )
    _, graph = index(root)
    assert node_ids(graph) - node_ids(graph, "file") == {
        "a.js::f",
        "a.js::f#2",
        "b.go::g",
        "c.rs::S",
        "c.rs::S.m",
        "c.rs::S.m#2",
    }


def test_javascript_barrel_reexports_resolve_to_the_definition(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "lib/impl.js": "export function work() { return 1; }\nexport function rest() { return 2; }\n",
            "lib/more.js": "export function extra() { return 3; }\n",
            "lib/index.js": 'export { work as doWork } from "./impl";\nexport * from "./more";\n',
            "app.js": 'import { doWork, extra } from "./lib";\nexport function main() { return doWork() + extra(); }\n',
        }
    )
    _, graph = index(root)
    assert non_contains(graph) == {
        ("imports", "lib/index.js", "lib/impl.js"),
        ("imports", "lib/index.js", "lib/more.js"),
        ("imports", "app.js", "lib/index.js"),
        ("calls", "app.js::main", "lib/impl.js::work"),
        ("calls", "app.js::main", "lib/more.js::extra"),
    }
