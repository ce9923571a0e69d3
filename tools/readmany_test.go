package tools

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

func TestReadFileMultiFile(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{
		"src/app.ts":   "const a = 1\nconst b = 2\nconst c = 3\nconst d = 4\n",
		"src/utils.ts": "export {}\n",
		"empty.txt":    "",
	})
	// The shape of Roo Code's read_file result, written out by hand.
	want := "<files>\n" +
		"<file><path>src/app.ts</path>\n<content lines=\"1-1\">\n1 | const a = 1\n</content>\n<content lines=\"3-4\">\n3 | const c = 3\n4 | const d = 4\n</content>\n</file>\n" +
		"<file><path>src/utils.ts</path>\n<content lines=\"1-1\">\n1 | export {}\n</content>\n</file>\n" +
		"<file><path>empty.txt</path>\n<content/><notice>File is empty</notice>\n</file>\n" +
		"</files>"
	args := `<file><path>src/app.ts</path><line_range>1-1</line_range><line_range>3-4</line_range></file>
<file>
  <path>src/utils.ts</path>
</file><file><path>empty.txt</path></file>`
	r, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"args": args})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != want {
		t.Errorf("args form:\n%s\nwant\n%s", r.Output, want)
	}
	whole := map[string]bool{}
	for _, rd := range r.Reads {
		whole[rd.Path] = rd.Whole
	}
	if whole["src/app.ts"] || !whole["src/utils.ts"] || !whole["empty.txt"] || len(r.Reads) != 3 {
		t.Errorf("reads = %+v: a ranged read must not count as a whole read", r.Reads)
	}

	r, err = rtRun(t, ws, ReadFile(), "read_file", map[string]any{"files": []any{
		map[string]any{"path": "src/app.ts", "line_ranges": []any{"1-1", []int{3, 4}}},
		map[string]any{"path": "src/utils.ts"},
		map[string]any{"path": "empty.txt"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != want {
		t.Errorf("files form:\n%s\nwant\n%s", r.Output, want)
	}
}

func TestReadFileMultiFileErrorsPerFile(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"a.txt": "one\ntwo\n", "pic.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"})
	args := "<file><path>a.txt</path><line_range>2-1</line_range></file>" +
		"<file><path>missing.txt</path></file>" +
		"<file><path>src</path></file>" +
		"<file><path>pic.png</path></file>" +
		"<file><path>a.txt</path><line_range>5-9</line_range></file>"
	if err := os.Mkdir(filepath.Join(ws.Dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"args": args})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<file><path>a.txt</path><error>Error reading file: Invalid line range: end line cannot be less than start line</error></file>",
		"<file><path>missing.txt</path><error>Error reading file: ",
		"<file><path>src</path><error>Error reading file: Cannot read 'src' because it is a directory. Use list_files tool instead.</error></file>",
		"<file><path>pic.png</path>\n<binary_file format=\"png\">Binary file - content not displayed</binary_file>\n</file>",
		"<file><path>a.txt</path><error>Error reading file: line 5 is past the end of the file (2 lines)</error></file>",
	} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("result lacks %q:\n%s", want, r.Output)
		}
	}
}

func TestReadFileMultiFileHostile(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("TOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := rtWorkspace(t, map[string]string{"ok.txt": "fine\n"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../" + filepath.Base(outside) + "/secret", filepath.Join(outside, "secret"), "link", "ok.txt/../../x"} {
		t.Run(p, func(t *testing.T) {
			args := "<file><path>ok.txt</path></file><file><path>" + p + "</path></file>"
			r, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"args": args})
			if rtCode(err) != engine.PathEscape {
				t.Fatalf("read_file(%q) = %v, %v; want PATH_ESCAPE for the whole call", p, r, err)
			}
			if strings.Contains(fmt.Sprint(err), "TOPSECRET") {
				t.Fatal("content from outside the workspace leaked")
			}
		})
	}
	many := strings.Repeat("<file><path>ok.txt</path></file>", MaxReadFiles+1)
	if _, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"args": many}); rtCode(err) != engine.InvalidArgument {
		t.Errorf("%d files: err = %v, want INVALID_ARGUMENT", MaxReadFiles+1, err)
	}
	if _, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"args": "<file><line_range>1-2</line_range></file>"}); rtCode(err) != engine.MissingParameter {
		t.Errorf("no path: err = %v, want MISSING_PARAMETER", err)
	}
	if _, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"files": "ok.txt"}); rtCode(err) != engine.InvalidArgument {
		t.Errorf("files as a string: err = %v, want INVALID_ARGUMENT", err)
	}
}

func TestReadFileDirectoryHint(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"src/a.go": "package a\n"})
	_, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"path": "src"})
	d, ok := engine.AsDenial(err)
	if !ok || !strings.Contains(d.Message, "Use list_files tool instead") || !strings.Contains(d.Hint, "list_files") {
		t.Fatalf("read_file(dir) = %v, want a pointer to list_files", err)
	}
}

func TestReadFileEncodings(t *testing.T) {
	utf16le := []byte{0xFF, 0xFE}
	for _, r := range "héllo\nwörld\n" {
		utf16le = append(utf16le, byte(r), byte(r>>8))
	}
	utf16be := []byte{0xFE, 0xFF}
	for _, r := range "ünï\n" {
		utf16be = append(utf16be, byte(r>>8), byte(r))
	}
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"latin-1", []byte("caf\xe9 cr\xe8me\nna\xefve\n"), "1 | café crème\n2 | naïve\n"},
		{"utf-16le bom", utf16le, "1 | héllo\n2 | wörld\n"},
		{"utf-16be bom", utf16be, "1 | ünï\n"},
		{"utf-8 bom", []byte("\xef\xbb\xbfx\n"), "1 | x\n"},
		{"utf-8", []byte("日本\n"), "1 | 日本\n"},
		{"nul is binary", []byte("ab\x00cd\n"), "is a binary file (6 bytes)"},
		{"control noise is binary", bytes.Repeat([]byte{1, 2, 3, 'a'}, 40), "is a binary file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := rtWorkspace(t, map[string]string{"f.txt": string(tc.body)})
			r, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"path": "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Output, tc.want) {
				t.Errorf("read_file = %q, want %q", r.Output, tc.want)
			}
			if r.Reads[0].SHA256 != engine.Hash(tc.body) {
				t.Error("the hash lock baseline must be the file's bytes, not the decoded text")
			}
		})
	}
}

// minimalPDF builds a one-page PDF showing lines of text, with a correct
// cross-reference table.
func minimalPDF(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj 0 -14 Td\n", l)
	}
	content.WriteString("ET")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func minimalDOCX(t *testing.T, paragraphs ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	doc := `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
	for _, p := range paragraphs {
		doc += `<w:p><w:r><w:t>` + p + `</w:t></w:r></w:p>`
	}
	doc += `<w:p><w:r><w:t>a</w:t><w:tab/><w:t xml:space="preserve">b &amp; c</w:t></w:r></w:p></w:body></w:document>`
	if _, err := w.Write([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadFileExtractsDocuments(t *testing.T) {
	nb := `{"cells":[{"cell_type":"markdown","source":["# Title\n","text"]},{"cell_type":"code","source":["x = 1"]},{"cell_type":"raw","source":["skip"]}],"nbformat":4}`
	ws := rtWorkspace(t, map[string]string{
		"doc.pdf":    string(minimalPDF("Hello PDF", "Second line")),
		"doc.docx":   string(minimalDOCX(t, "First paragraph", "Second")),
		"nb.ipynb":   nb,
		"broken.pdf": "%PDF-1.4 not really",
		"bomb.docx":  "PK\x03\x04garbage",
	})
	for _, tc := range []struct{ path, want string }{
		{"doc.pdf", "1 | Hello PDF\n2 | Second line\n"},
		{"doc.docx", "1 | First paragraph\n2 | \n3 | Second\n4 | \n5 | a\tb & c\n6 | \n"},
		// Roo joins a cell's source lines with "\n", lines that already end with one.
		{"nb.ipynb", "1 | # Title\n2 | \n3 | text\n4 | x = 1\n"},
	} {
		r, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"path": tc.path})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if r.Output != tc.want {
			t.Errorf("read_file(%s) = %q, want %q", tc.path, r.Output, tc.want)
		}
	}
	for _, p := range []string{"broken.pdf", "bomb.docx"} {
		if _, err := rtRun(t, ws, ReadFile(), "read_file", map[string]any{"path": p}); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("read_file(%s) = %v, want an error naming the file", p, err)
		}
	}
}

func FuzzParseReadArgs(f *testing.F) {
	for _, s := range []string{"<file><path>a</path><line_range>1-2</line_range></file>", "<file><path></path></file>", "<file><path>a", "<args><file><path>&amp;</path></file></args>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reqs := ParseReadArgs(s)
		if len(reqs) > strings.Count(s, "<file>") {
			t.Fatalf("ParseReadArgs(%q) found %d files in %d <file> elements", s, len(reqs), strings.Count(s, "<file>"))
		}
		for _, r := range reqs {
			if r.Path == "" {
				t.Fatalf("ParseReadArgs(%q) returned a file without a path", s)
			}
		}
	})
}

func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"caf\xe9", "\xff\xfeh\x00", "\xfe\xff\x00h", "\xef\xbb\xbfx", "%PDF-"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = IsBinary(b)
		s, _ := DecodeText(b)
		if !utf8Valid(s) {
			t.Fatalf("DecodeText(%q) = %q, not UTF-8", b, s)
		}
		_, _, _ = ExtractText("x.docx", b)
		_, _, _ = ExtractText("x.ipynb", b)
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
