// Package picture draws on the images a browser captured, after the
// capture and outside the page, which could see or alter anything put into
// it: the boxes and refs of screenshot's mark_refs, and the labelled boxes
// painted over frames the caller may not see. Every decode is bounded by
// pixels (Decoded), server wide.
package picture

import (
	"bytes"
	"context"
	"fmt"
	"image"

	"github.com/chromegate/chromegate/executor"
	"golang.org/x/sync/semaphore"
)

// Image work is bounded by pixels. A capture's size is the page's and the
// model's to choose (emulate's viewport and scale, a full page, a huge
// element), and a decoded image costs four bytes a pixel, so every
// decode goes through Decoded: the header is read first
// (image.DecodeConfig, a few bytes), an image over
// executor.MaxShotPixels is refused without being decoded, and the
// decoded pixels of all calls at once stay within decodeBudget, server
// wide: a decode that would go over it waits (bounded by the call's
// context) for others to finish.

// decodeBudget is the bytes of decoded pixels all calls may hold at once:
// two of the largest captures, with the copy a JPEG needs to be drawn on.
const decodeBudget = 4 * 4 * executor.MaxShotPixels

// decodes is the server-wide budget; a variable so that a test can shrink it.
var decodes = semaphore.NewWeighted(decodeBudget)

// decodedCost is the budget one decode of a w x h image takes: its RGBA
// pixels, twice (a JPEG is decoded to YCbCr and copied to RGBA to draw on).
func decodedCost(w, h int) int64 { return 2 * 4 * int64(w) * int64(h) }

// CheckPixels refuses an encoded image whose header says it has more than
// executor.MaxShotPixels, or that has no header an image decoder knows.
func CheckPixels(data []byte) (image.Config, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, fmt.Errorf("the image does not decode: %w", err)
	}
	if n := executor.ShotPixels(float64(cfg.Width), float64(cfg.Height), 1); n > executor.MaxShotPixels {
		return cfg, executor.TooManyPixels(fmt.Sprintf("the %dx%d capture", cfg.Width, cfg.Height), n).
			WithHint("emulate a smaller viewport or scale, or screenshot a smaller element")
	}
	return cfg, nil
}

// Decoded decodes data within the budget and calls use with the image;
// the budget is held until use returns, since what use makes of the
// image (a copy, an encoding) lives as long.
func Decoded(ctx context.Context, data []byte, use func(image.Image) error) error {
	cfg, err := CheckPixels(data)
	if err != nil {
		return err
	}
	cost := decodedCost(cfg.Width, cfg.Height)
	if err := decodes.Acquire(ctx, cost); err != nil {
		return executor.Errorf(executor.CodeTimeout, "waiting for memory to decode a %dx%d image: %v", cfg.Width, cfg.Height, err).
			WithHint("other calls are decoding large images; retry, or emulate a smaller viewport")
	}
	defer decodes.Release(cost)
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the image does not decode: %w", err)
	}
	return use(img)
}
