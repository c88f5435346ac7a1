//! The bar chart of `--png`: TFLOP/s per GPU of every variant with a GEMM,
//! grouped by family and shape. Drawn into an RGB raster with the 8x8
//! bitmap font of `font8x8` and written by a small PNG encoder (stored
//! deflate blocks): no system font, library or network is needed.

use crate::bench::{Outcome, Row, Setup};
use hir_tools::backend::Backend;
use hir_tools::programs::Variant;

type Rgb = [u8; 3];

const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const GRID: Rgb = [220, 220, 220];

fn color(variant: Variant) -> Rgb {
    match variant {
        Variant::Gemm => [90, 90, 90],
        Variant::Comm => [180, 180, 180],
        Variant::NoOverlap => [214, 39, 40],
        Variant::Pipeline => [31, 119, 180],
        Variant::P2pNccl => [44, 160, 44],
        Variant::P2pCuda => [255, 127, 14],
    }
}

struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            pixels: WHITE.repeat(width * height),
        }
    }

    fn fill(&mut self, x: usize, y: usize, width: usize, height: usize, rgb: Rgb) {
        for row in y..(y + height).min(self.height) {
            for column in x..(x + width).min(self.width) {
                let at = (row * self.width + column) * 3;
                self.pixels[at..at + 3].copy_from_slice(&rgb);
            }
        }
    }

    /// `text` in the 8x8 font scaled by `scale`, its top left at `(x, y)`.
    fn text(&mut self, x: usize, y: usize, text: &str, scale: usize, rgb: Rgb) {
        for (index, c) in text.chars().enumerate() {
            let glyph = font8x8::legacy::BASIC_LEGACY
                .get(c as usize)
                .copied()
                .unwrap_or([0; 8]);
            for (row, bits) in glyph.iter().enumerate() {
                for column in 0..8 {
                    if bits >> column & 1 == 1 {
                        self.fill(
                            x + (index * 8 + column) * scale,
                            y + row * scale,
                            scale,
                            scale,
                            rgb,
                        );
                    }
                }
            }
        }
    }

    fn png(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity((self.width * 3 + 1) * self.height);
        for row in self.pixels.chunks(self.width * 3) {
            raw.push(0); // filter: none
            raw.extend_from_slice(row);
        }
        let mut header = Vec::new();
        header.extend_from_slice(&(self.width as u32).to_be_bytes());
        header.extend_from_slice(&(self.height as u32).to_be_bytes());
        header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        chunk(&mut png, b"IHDR", &header);
        chunk(&mut png, b"IDAT", &zlib_stored(&raw));
        chunk(&mut png, b"IEND", &[]);
        png
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of `data` in stored (uncompressed) deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65535).collect();
    for (index, block) in blocks.iter().enumerate() {
        out.push(u8::from(index + 1 == blocks.len()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    if blocks.is_empty() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// A step of 1, 2 or 5 times a power of ten that splits `max` into at most
/// about 8 intervals.
fn tick_step(max: f64) -> f64 {
    let rough = max / 8.0;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}

/// The bars of one family and shape: the family, the shape and each
/// variant's TFLOP/s.
type Group = (String, String, Vec<(Variant, f64)>);

/// The chart: its width, height and PNG bytes.
pub fn chart(setup: &Setup, rows: &[Row]) -> (usize, usize, Vec<u8>) {
    let run = setup.run;
    // Groups of (label, bars) in the rows' order.
    let mut groups: Vec<Group> = Vec::new();
    for row in rows {
        let Outcome::Measured(measure) = &row.outcome else {
            continue;
        };
        let Some(tflops) = measure.tflops else {
            continue;
        };
        let family = row.family.name().to_owned();
        let shape = format!("{}x{}x{}", row.shape.0, row.shape.1, row.shape.2);
        match groups.last_mut() {
            Some((f, s, bars)) if *f == family && *s == shape => bars.push((row.variant, tflops)),
            _ => groups.push((family, shape, vec![(row.variant, tflops)])),
        }
    }
    let bar = 24;
    let most = groups
        .iter()
        .map(|(_, _, bars)| bars.len())
        .max()
        .unwrap_or(1);
    let group_width = (most * bar + 40).max(160);
    let (left, right, top, bottom) = (80, 20, 80, 60);
    let width = (left + groups.len() * group_width + right).max(left + 46 * 16 + right);
    let height = 480;
    let plot_height = height - top - bottom;
    let mut canvas = Canvas::new(width, height);

    let title = format!(
        "hir-bench: TFLOP/s per GPU ({}, D={}, {})",
        run.backend.name(),
        run.devices,
        run.dtype.mlir(),
    );
    canvas.text(left, 10, &title, 2, BLACK);
    if run.backend == Backend::Cpu {
        let note = "cpu backend: these numbers are NOT meaningful as performance";
        canvas.text(left, 60, note, 1, [200, 0, 0]);
    }
    // Legend: the variants that have bars.
    let mut x = left;
    for variant in Variant::ALL {
        if groups
            .iter()
            .any(|(_, _, bars)| bars.iter().any(|(v, _)| *v == variant))
        {
            canvas.fill(x, 40, 12, 12, color(variant));
            canvas.text(x + 16, 42, variant.name(), 1, BLACK);
            x += 16 + variant.name().len() * 8 + 24;
        }
    }

    let max = groups
        .iter()
        .flat_map(|(_, _, bars)| bars.iter().map(|(_, tflops)| *tflops))
        .fold(0.0f64, f64::max);
    let base = top + plot_height;
    if max > 0.0 {
        let step = tick_step(max * 1.05);
        let top_value = (max * 1.05 / step).ceil() * step;
        let y_of = |value: f64| base - ((value / top_value) * plot_height as f64).round() as usize;
        let mut tick = 0.0;
        while tick <= top_value + step * 1e-9 {
            let y = y_of(tick);
            canvas.fill(left, y, width - left - right, 1, GRID);
            let label = if step >= 1.0 {
                format!("{tick:.0}")
            } else {
                format!("{tick:.*}", (-step.log10().floor()) as usize)
            };
            canvas.text(
                left - 8 - label.len() * 8,
                y.saturating_sub(4),
                &label,
                1,
                BLACK,
            );
            tick += step;
        }
        for (index, (family, shape, bars)) in groups.iter().enumerate() {
            let x0 = left + index * group_width + (group_width - bars.len() * bar) / 2;
            for (position, (variant, tflops)) in bars.iter().enumerate() {
                let y = y_of(*tflops);
                canvas.fill(
                    x0 + position * bar + 2,
                    y,
                    bar - 4,
                    base - y,
                    color(*variant),
                );
            }
            let center = left + index * group_width + group_width / 2;
            canvas.text(
                center.saturating_sub(family.len() * 4),
                base + 10,
                family,
                1,
                BLACK,
            );
            canvas.text(
                center.saturating_sub(shape.len() * 4),
                base + 24,
                shape,
                1,
                BLACK,
            );
        }
    } else {
        canvas.text(
            left,
            top + 20,
            "no variant with a GEMM was measured",
            1,
            BLACK,
        );
    }
    canvas.fill(left, top, 1, plot_height + 1, BLACK);
    canvas.fill(left, base, width - left - right, 1, BLACK);
    canvas.text(8, top - 16, "TFLOP/s", 1, BLACK);
    (width, height, canvas.png())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_pieces() {
        // The CRC of an IEND chunk, as every PNG ends.
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
        let stored = zlib_stored(b"abc");
        assert_eq!(&stored[..7], &[0x78, 0x01, 1, 3, 0, 0xfc, 0xff]);
        assert_eq!(&stored[stored.len() - 4..], &0x024d_0127u32.to_be_bytes());
        let png = Canvas::new(3, 2).png();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"));
        assert!(png.ends_with(&[0xae, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(800.0), 100.0);
        assert_eq!(tick_step(13.0), 2.0);
        assert!((tick_step(0.3) - 0.05).abs() < 1e-12);
    }
}
