package tool

import (
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/internal/text"
)

// readImage answers read_file for a file whose first bytes say it is an
// image of media type mt and size bytes long: with Env.Vision the picture
// itself (Result.Image) under a line saying it is attached; otherwise, or
// when it is over the limits, a line saying why it is not shown. None of
// these is an error: the file was read.
func readImage(env *Env, rel, mt string, size int64, r io.Reader, res Result) Result {
	kind := images.KindOf(mt)
	if !env.Vision {
		res.Content = fmt.Sprintf("%s: %s image, %s; not shown: this session's model cannot see images (if it can, the user can turn on %s)", rel, kind, images.SizeText(int(min(size, 1<<40))), images.VisionSetting)
		return res
	}
	if size > images.MaxBytes {
		res.Content = fmt.Sprintf("%s: %s image, %s; not shown: images over %s are not sent", rel, kind, images.SizeText(int(min(size, 1<<40))), images.SizeText(images.MaxBytes))
		return res
	}
	data, err := io.ReadAll(io.LimitReader(r, images.MaxBytes+1))
	if err != nil {
		res.Content = fmt.Sprintf("%s: %s image; reading it failed (%v), so it is not shown", rel, kind, unwrapPathError(err))
		res.IsError = true
		return res
	}
	info, err := images.Check(rel, data)
	if err != nil {
		res.Content = fmt.Sprintf("%s: not shown: %v", rel, err)
		return res
	}
	res.Content = fmt.Sprintf("%s: %s; the image is attached below for you to look at (about %s tokens)", rel, info, text.Thousands(info.Tokens()))
	res.Image = &Image{Data: data, Info: info}
	return res
}
