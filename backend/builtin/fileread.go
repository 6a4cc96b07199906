package builtin

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/core"
)

// Encodings of file_read's content.
const (
	encodingUTF8   = "utf-8"
	encodingBase64 = "base64"
)

// ReadFile runs file_read: the file at args.Path, inside an allowed folder,
// as UTF-8 text, or as base64 when it is binary and its sniffed MIME type is
// allow-listed.
func (b *Builtin) ReadFile(ctx context.Context, args ReadArgs) (ReadResult, error) {
	out, err := b.readFile(ctx, args)
	return out.res, err
}

// readOutcome is a file read with what the MCP content needs besides the
// structured result.
type readOutcome struct {
	res  ReadResult
	data []byte
	path string
}

func (b *Builtin) readFile(_ context.Context, args ReadArgs) (readOutcome, error) {
	cfg := b.cur.Load()
	res, err := cfg.resolveFile(args.Path)
	if err != nil {
		return readOutcome{}, err
	}
	defer res.close()
	// O_NONBLOCK: opening a FIFO must not hang the call; it is refused
	// below as not a regular file.
	f, err := res.root.OpenFile(res.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return readOutcome{}, res.fail(err)
	}
	defer f.Close()
	if err := cfg.protectedErr(fdPath(f, realPath(res)), res.shown); err != nil {
		return readOutcome{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return readOutcome{}, res.fail(err)
	}
	if err := regularFile(res.shown, fi); err != nil {
		return readOutcome{}, err
	}
	limit := cfg.settings.ReadCapBytes
	if fi.Size() > limit {
		return readOutcome{}, tooLargeToRead(res.shown, fi.Size(), limit)
	}
	// One buffer of the file's size, read into once and handed out as the
	// content without a copy.
	var sb strings.Builder
	sb.Grow(int(fi.Size()) + 1)
	if _, err := io.Copy(&sb, io.LimitReader(f, limit+1)); err != nil {
		return readOutcome{}, res.fail(err)
	}
	text := sb.String()
	if int64(len(text)) > limit {
		return readOutcome{}, tooLargeToRead(res.shown, int64(len(text)), limit) // it grew while read
	}
	out := readOutcome{path: res.shown}
	if isText(text) {
		out.res = ReadResult{Content: text, MIMEType: sniff(text), Encoding: encodingUTF8}
		return out, nil
	}
	data := []byte(text)
	out.data = data
	mt := sniff(text)
	base, _, _ := mime.ParseMediaType(mt)
	if slices.Contains(cfg.settings.BinaryMIMEAllow, base) {
		out.res = ReadResult{Content: base64.StdEncoding.EncodeToString(data), MIMEType: base, Encoding: encodingBase64}
		return out, nil
	}
	if strings.HasPrefix(base, "text/") && !hasBinaryControl(text) {
		off := invalidUTF8Offset(data)
		return readOutcome{}, (&core.Error{Code: EInvalidUTF8,
			Message: fmt.Sprintf("%s is not UTF-8 text (invalid byte at offset %d)", res.shown, off)}).
			WithHint("file_read returns UTF-8 text; convert the file to UTF-8, or allow text/plain under binaryMimeAllow to read it as base64")
	}
	return readOutcome{}, (&core.Error{Code: EBinaryRefused,
		Message: fmt.Sprintf("%s is a binary file (%s); file_read returns text only", res.shown, base)}).
		WithHint(fmt.Sprintf("to let agents read %s files as base64, add %s to binaryMimeAllow in Airlock's Built-in tools settings (#/builtin)", base, base))
}

func tooLargeToRead(shown string, size, limit int64) *core.Error {
	return (&core.Error{Code: core.ETooLarge,
		Message: fmt.Sprintf("%s is %d bytes; file_read returns at most %d", shown, size, limit)}).
		WithHint("raise readCapBytes in Airlock's Built-in tools settings (#/builtin), or read a smaller file")
}

// regularFile refuses directories, devices, pipes and sockets.
func regularFile(shown string, fi os.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return core.Errorf(ENotAFile, "%s is a folder, not a file", shown)
	}
	return core.Errorf(ENotAFile, "%s is %s, not a regular file", shown, fileKind(fi.Mode()))
}

// fileKind names what a non-regular file is, in words.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeIrregular != 0:
		return "a file of an unknown kind"
	}
	return "not a file (" + m.Type().String() + ")"
}

// sniff returns the MIME type of data judged by its content alone (its
// first 512 bytes, as net/http does).
func sniff(data string) string { return http.DetectContentType([]byte(data[:min(len(data), 512)])) }

// isText reports whether data is UTF-8 text: valid UTF-8 without the
// control bytes that mark binary data (the same set content sniffing uses).
func isText(data string) bool { return utf8.ValidString(data) && !hasBinaryControl(data) }

func hasBinaryControl(data string) bool {
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c >= 0x20 {
			continue
		}
		if c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1A) || (c >= 0x1C && c <= 0x1F) {
			return true
		}
	}
	return false
}

func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// content is file_read's unstructured content: the text itself, or the
// bytes as an image, audio or an embedded resource.
func (o readOutcome) content() mcp.Content {
	if o.res.Encoding != encodingBase64 {
		return &mcp.TextContent{Text: o.res.Content}
	}
	switch mt := o.res.MIMEType; {
	case strings.HasPrefix(mt, "image/"):
		return &mcp.ImageContent{Data: o.data, MIMEType: mt}
	case strings.HasPrefix(mt, "audio/"):
		return &mcp.AudioContent{Data: o.data, MIMEType: mt}
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(o.path)}
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: u.String(), MIMEType: o.res.MIMEType, Blob: o.data}}
}
