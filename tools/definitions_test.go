package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

const defsGo = `package a

import "fmt"

// A does.
func A() {
	fmt.Println("a")
	fmt.Println("b")
}

func short() {}

type T struct {
	A int
	B int
}

type (
	U int
	V interface {
		M()
		N()
	}
)

const (
	C = 1
	D = 2
)

var x = 1

func (t *T) Method(
	a int,
) error {
	return nil
}
`

const defsTS = `import { x } from "./x";

export interface Shape {
  area(): number;
  name: string;
}

export type Union =
  | { kind: "a" }
  | { kind: "b" }
  | { kind: "c" };

type Short = string;

export enum Color {
  Red,
  Green,
  Blue,
}

export abstract class Base<T> extends Thing implements Shape {
  private readonly items: T[] = [];
  static count = 0;

  constructor(private name: string) {
    super();
    this.items = [];
  }

  get size(): number {
    const s = ` + "`${this.items.length} items {`" + `;
    return this.items.length;
  }

  async load(url: string): Promise<{ ok: boolean }> {
    const re = /}/g;
    const msg = "it's }";
    return { ok: true };
  }

  handler = (e: Event) => {
    console.log(e);
    return e;
  };

  abstract area(): number;
}

export function top(a: number,
                    b: number): number {
  function inner() {
    return 1;
    // }
  }
  return a + b + inner();
}

export const arrow = async (x: number): Promise<number> => {
  await sleep(x);
  return x;
};

const expr = (a: number) =>
  a *
  2 *
  3;

namespace NS {
  export const v = 1;
  export const w = 2;
}

describe("suite", () => {
  it("works", () => {
    expect(1).toBe(1);
  });
});
`

const defsJSX = `export function Card({ title }) {
  return (
    <div className="card">
      <p>Don't {title} it's fine</p>
    </div>
  );
}

class Old extends React.Component {
  render() {
    return <span>{this.props.x}</span>;
  }
}
`

const defsPy = "import os\n\n\nclass Greeter:\n    \"\"\"Says hello.\n\n    def not_a_def():\n    \"\"\"\n\n" +
	"    def __init__(self, name):\n        self.name = name\n        # comment\n# stray comment\n        self.x = (1,\n    2)\n\n" +
	"    @property\n    @cached\n    def greeting(self):\n        s = '''\nclass NotAClass:\n'''\n        return \"hi \" + self.name\n\n\n" +
	"async def fetch(url,\n                timeout=3):\n    async with session() as s:\n        return await s.get(url)\n\ndef short(): pass\n"

func TestListCodeDefinitionNames(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{
		"src/a.go":     defsGo,
		"src/b.ts":     defsTS,
		"src/c.jsx":    defsJSX,
		"src/d.py":     defsPy,
		"src/e.txt":    "not code\n",
		"src/tiny.go":  "package a\n\nfunc f() {}\n",
		"src/sub/x.go": defsGo,
		"crlf/w.go":    strings.ReplaceAll(defsGo, "\n", "\r\n"),
	})
	for _, tc := range []struct {
		path, want string
	}{
		{"src/a.go", "# a.go\n6--9 | func A() {\n13--16 | type T struct {\n20--23 | \tV interface {\n26--29 | const (\n33--37 | func (t *T) Method(\n"},
		{"src/b.ts", "# b.ts\n3--6 | export interface Shape {\n8--11 | export type Union =\n15--19 | export enum Color {\n" +
			"21--47 | export abstract class Base<T> extends Thing implements Shape {\n25--28 |   constructor(private name: string) {\n" +
			"30--33 |   get size(): number {\n35--39 |   async load(url: string): Promise<{ ok: boolean }> {\n" +
			"41--44 |   handler = (e: Event) => {\n49--56 | export function top(a: number,\n51--54 |   function inner() {\n" +
			"58--61 | export const arrow = async (x: number): Promise<number> => {\n63--66 | const expr = (a: number) =>\n" +
			"68--71 | namespace NS {\n73--77 | describe(\"suite\", () => {\n"},
		{"src/c.jsx", "# c.jsx\n1--7 | export function Card({ title }) {\n9--13 | class Old extends React.Component {\n"},
		{"src/d.py", "# d.py\n4--23 | class Greeter:\n10--15 |     def __init__(self, name):\n17--23 |     @property\n" +
			"19--23 |     def greeting(self):\n26--29 | async def fetch(url,\n"},
		{"crlf/w.go", "# w.go\n6--9 | func A() {\n13--16 | type T struct {\n20--23 | \tV interface {\n26--29 | const (\n33--37 | func (t *T) Method(\n"},
		{"src/e.txt", "No source code definitions found in file."},
		{"src/tiny.go", "No source code definitions found in file."},
		{"src", "# a.go\n6--9 | func A() {\n13--16 | type T struct {\n20--23 | \tV interface {\n26--29 | const (\n33--37 | func (t *T) Method(\n\n" +
			"# b.ts\n3--6 | export interface Shape {\n8--11 | export type Union =\n15--19 | export enum Color {\n" +
			"21--47 | export abstract class Base<T> extends Thing implements Shape {\n25--28 |   constructor(private name: string) {\n" +
			"30--33 |   get size(): number {\n35--39 |   async load(url: string): Promise<{ ok: boolean }> {\n" +
			"41--44 |   handler = (e: Event) => {\n49--56 | export function top(a: number,\n51--54 |   function inner() {\n" +
			"58--61 | export const arrow = async (x: number): Promise<number> => {\n63--66 | const expr = (a: number) =>\n" +
			"68--71 | namespace NS {\n73--77 | describe(\"suite\", () => {\n\n" +
			"# c.jsx\n1--7 | export function Card({ title }) {\n9--13 | class Old extends React.Component {\n\n" +
			"# d.py\n4--23 | class Greeter:\n10--15 |     def __init__(self, name):\n17--23 |     @property\n" +
			"19--23 |     def greeting(self):\n26--29 | async def fetch(url,\n\n"},
		{"src/sub/", "# x.go\n6--9 | func A() {\n13--16 | type T struct {\n20--23 | \tV interface {\n26--29 | const (\n33--37 | func (t *T) Method(\n\n"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, err := rtRun(t, ws, ListCodeDefinitionNames(), "list_code_definition_names", map[string]any{"path": tc.path})
			if err != nil {
				t.Fatalf("list_code_definition_names: %v", err)
			}
			if r.Output != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", r.Output, tc.want)
			}
		})
	}
}

func TestListCodeDefinitionNamesEmptyAndRefused(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"docs/readme.md": "# r\n"})
	if err := os.Mkdir(filepath.Join(ws.Dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := rtRun(t, ws, ListCodeDefinitionNames(), "list_code_definition_names", map[string]any{"path": "docs"})
	if err != nil || r.Output != "No source code definitions found." {
		t.Errorf("docs: %v %q", err, r.Output)
	}
	if _, err := rtRun(t, ws, ListCodeDefinitionNames(), "list_code_definition_names", map[string]any{"path": "nope.go"}); err == nil {
		t.Error("a missing file is outlined")
	}
	if _, err := rtRun(t, ws, ListCodeDefinitionNames(), "list_code_definition_names", map[string]any{}); rtCode(err) != engine.MissingParameter {
		t.Errorf("no path: %v", err)
	}
	if _, err := rtRun(t, ws, ListCodeDefinitionNames(), "list_code_definition_names", map[string]any{"path": "../x"}); rtCode(err) != engine.PathEscape {
		t.Errorf("escape: %v", err)
	}
}

// The scanners must not crash or loop on anything; what they find must lie
// within the file.
func FuzzDefinitionScanners(f *testing.F) {
	for _, s := range []string{defsGo, defsTS, defsJSX, defsPy, "`${`", "'", "/*", "class {", "def f(:\n\t'''", "}}}{{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n := strings.Count(src, "\n") + 1
		for _, scan := range []func(string) []definition{goDefinitions, scriptDefinitions, pyDefinitions} {
			for _, d := range scan(src) {
				if d.start < 1 || d.end < d.start || d.end > n {
					t.Fatalf("definition %+v outside the %d lines of %q", d, n, src)
				}
			}
		}
	})
}
