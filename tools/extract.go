package tools

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxExtractBytes bounds what an extractor may unpack from one document: a
// DOCX is a zip, and a small zip can inflate to gigabytes.
const maxExtractBytes = 32 << 20

// extractors are the document formats read_file turns into text, as Roo
// Code's extractTextFromFile does (its .xlsx reader is not carried over).
var extractors = map[string]func([]byte) (string, error){
	".pdf":   extractPDF,
	".docx":  extractDOCX,
	".ipynb": extractNotebook,
}

// ExtractText returns the text of a PDF, DOCX or Jupyter notebook, chosen by
// the file name's extension; ok is false for any other file.
func ExtractText(name string, b []byte) (text string, ok bool, err error) {
	f := extractors[strings.ToLower(path.Ext(name))]
	if f == nil {
		return "", false, nil
	}
	defer func() {
		// A malformed document must not take the process down with it.
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("the document is malformed: %v", p)
		}
	}()
	text, err = f(b)
	return text, true, err
}

func extractPDF(b []byte) (string, error) {
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", fmt.Errorf("not a readable PDF: %w", err)
	}
	var out strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		// Content follows every text-positioning operator; glyphs on a new
		// baseline start a new line, a gap wider than a fifth of the font
		// size is a space.
		var line strings.Builder
		var prev *pdf.Text
		flush := func() {
			out.WriteString(strings.TrimRight(line.String(), " "))
			out.WriteByte('\n')
			line.Reset()
		}
		for _, g := range p.Content().Text {
			if prev != nil {
				switch {
				case math.Abs(g.Y-prev.Y) > max(prev.FontSize, 1)/2:
					flush()
				case g.X > prev.X+prev.W+max(prev.FontSize, 1)/5:
					line.WriteByte(' ')
				}
			}
			line.WriteString(g.S)
			prev = &g
			if out.Len()+line.Len() > maxExtractBytes {
				return "", errors.New("the PDF's text is larger than read_file handles")
			}
		}
		if prev != nil {
			flush()
		}
		if i < r.NumPage() {
			out.WriteByte('\n')
		}
	}
	return out.String(), nil
}

// extractDOCX reads word/document.xml: paragraphs become lines followed by
// a blank line (as mammoth's raw text does), tabs and breaks are kept.
func extractDOCX(b []byte) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", fmt.Errorf("not a readable DOCX (zip): %w", err)
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
		}
	}
	if doc == nil {
		return "", errors.New("not a DOCX: word/document.xml is missing")
	}
	rc, err := doc.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	dec := xml.NewDecoder(io.LimitReader(rc, maxExtractBytes))
	var out, para strings.Builder
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("word/document.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				para.WriteByte('\t')
			case "br", "cr":
				para.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				out.WriteString(para.String())
				out.WriteString("\n\n")
				para.Reset()
			}
		case xml.CharData:
			if inText {
				para.Write(t)
			}
		}
	}
	out.WriteString(para.String())
	return out.String(), nil
}

// extractNotebook returns the source of the markdown and code cells, each
// cell's lines joined with "\n" and followed by one, as Roo Code does.
func extractNotebook(b []byte) (string, error) {
	var nb struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return "", fmt.Errorf("not a Jupyter notebook: %w", err)
	}
	var out strings.Builder
	for _, c := range nb.Cells {
		if c.Type != "markdown" && c.Type != "code" || len(c.Source) == 0 {
			continue
		}
		var lines []string
		if err := json.Unmarshal(c.Source, &lines); err != nil {
			var s string
			if err := json.Unmarshal(c.Source, &s); err != nil {
				return "", errors.New("not a Jupyter notebook: a cell's source is neither text nor a list of lines")
			}
			lines = []string{s}
		}
		if len(lines) == 0 {
			continue
		}
		out.WriteString(strings.Join(lines, "\n"))
		out.WriteByte('\n')
	}
	return out.String(), nil
}
