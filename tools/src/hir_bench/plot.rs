//! The bar charts of `--png`: TFLOP/s per GPU of every variant with a GEMM,
//! and its ratio to the GEMM alone, grouped by family and shape. Drawn into an RGB raster with the 8x8
//! bitmap font of `font8x8` and written as a PNG (deflated by
//! `miniz_oxide`): no system font, library or network is needed.

use crate::results::{Outcome, Row, Setup};
use hir_runtime::Backend;
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
        chunk(
            &mut png,
            b"IDAT",
            &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6),
        );
        chunk(&mut png, b"IEND", &[]);
        png
    }
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32fast::hash(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
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

/// What a chart shows of each measured variant with a GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// TFLOP/s per GPU at the median time.
    Tflops,
    /// The GEMM alone's time over the variant's: a bar from the medians, a
    /// line down or up to the same ratio of the minimum times (their spread).
    VsGemm,
}

impl Metric {
    fn title(self) -> &'static str {
        match self {
            Metric::Tflops => "TFLOP/s per GPU",
            Metric::VsGemm => "GEMM alone's time / time (bars: medians; lines: minimums)",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            Metric::Tflops => "TFLOP/s",
            Metric::VsGemm => "vs GEMM",
        }
    }
}

/// One bar: its variant, its value and, for ratios, the ratio of the
/// minimum times.
type Bar = (Variant, f64, Option<f64>);

/// The bars of one family and shape: the family, the shape and the bars.
type Group = (String, String, Vec<Bar>);

/// The bars of `metric`, grouped by family and shape in the rows' order.
fn groups(rows: &[Row], metric: Metric) -> Vec<Group> {
    let gemm_min = |row: &Row| {
        rows.iter()
            .find(|other| {
                other.family == row.family
                    && other.shape == row.shape
                    && other.variant == Variant::Gemm
            })
            .and_then(|gemm| match &gemm.outcome {
                Outcome::Measured(measure) => Some(measure.min_ms),
                Outcome::Skipped(_) => None,
            })
    };
    let mut groups: Vec<Group> = Vec::new();
    for row in rows {
        let Outcome::Measured(measure) = &row.outcome else {
            continue;
        };
        let bar = match metric {
            Metric::Tflops => measure.tflops.map(|tflops| (row.variant, tflops, None)),
            Metric::VsGemm => measure.ratio.map(|ratio| {
                let spread = gemm_min(row).map(|gemm| gemm / measure.min_ms);
                (row.variant, ratio, spread)
            }),
        };
        let Some(bar) = bar else {
            continue;
        };
        let family = row.family.name().to_owned();
        let shape = format!("{}x{}x{}", row.shape.0, row.shape.1, row.shape.2);
        match groups.last_mut() {
            Some((f, s, bars)) if *f == family && *s == shape => bars.push(bar),
            _ => groups.push((family, shape, vec![bar])),
        }
    }
    groups
}

/// The chart of `metric`: its width, height and PNG bytes.
pub fn chart(setup: &Setup, rows: &[Row], metric: Metric) -> (usize, usize, Vec<u8>) {
    let run = setup.run;
    let groups = groups(rows, metric);
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

    canvas.text(left, 8, &format!("hir-bench: {}", metric.title()), 1, BLACK);
    let mut about = format!(
        "{}, D={}, {}, {}",
        run.backend.name(),
        run.devices,
        run.dtype.mlir(),
        setup.provenance.commit
    );
    if let Some(gpu) = &setup.provenance.gpu {
        about.push_str(&format!(", {gpu}"));
    }
    canvas.text(left, 22, &about, 1, BLACK);
    if run.backend == Backend::Cpu {
        let note = "cpu backend: these numbers are NOT meaningful as performance";
        canvas.text(left, 60, note, 1, [200, 0, 0]);
    }
    // Legend: the variants that have bars.
    let mut x = left;
    for variant in Variant::ALL {
        if groups
            .iter()
            .any(|(_, _, bars)| bars.iter().any(|(v, _, _)| *v == variant))
        {
            canvas.fill(x, 40, 12, 12, color(variant));
            canvas.text(x + 16, 42, variant.name(), 1, BLACK);
            x += 16 + variant.name().len() * 8 + 24;
        }
    }

    let max = groups
        .iter()
        .flat_map(|(_, _, bars)| {
            bars.iter()
                .map(|(_, value, spread)| value.max(spread.unwrap_or(0.0)))
        })
        .fold(0.0f64, f64::max);
    let base = top + plot_height;
    if max > 0.0 {
        let step = tick_step(max * 1.05);
        let top_value = (max * 1.05 / step).ceil() * step;
        let y_of = |value: f64| {
            base - ((value.min(top_value) / top_value) * plot_height as f64).round() as usize
        };
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
        if metric == Metric::VsGemm {
            // The GEMM alone.
            canvas.fill(left, y_of(1.0), width - left - right, 2, BLACK);
        }
        for (index, (family, shape, bars)) in groups.iter().enumerate() {
            let x0 = left + index * group_width + (group_width - bars.len() * bar) / 2;
            for (position, (variant, value, spread)) in bars.iter().enumerate() {
                let x = x0 + position * bar;
                let y = y_of(*value);
                canvas.fill(x + 2, y, bar - 4, base - y, color(*variant));
                if let Some(spread) = spread {
                    let other = y_of(*spread);
                    canvas.fill(
                        x + bar / 2 - 1,
                        y.min(other),
                        2,
                        y.abs_diff(other) + 1,
                        BLACK,
                    );
                    canvas.fill(x + 6, other, bar - 12, 2, BLACK);
                }
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
    canvas.text(8, top - 16, metric.axis(), 1, BLACK);
    (width, height, canvas.png())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_deflated_and_decodes_to_the_pixels() {
        let mut canvas = Canvas::new(300, 200);
        canvas.fill(10, 10, 50, 20, [255, 0, 0]);
        let png = canvas.png();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"));
        // The IEND chunk and its CRC, as every PNG ends.
        assert!(png.ends_with(b"IEND\xae\x42\x60\x82"));
        let idat = png
            .windows(4)
            .position(|w| w == b"IDAT")
            .expect("an IDAT chunk");
        let len = u32::from_be_bytes(png[idat - 4..idat].try_into().unwrap()) as usize;
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&png[idat + 4..idat + 4 + len])
            .expect("a zlib stream");
        assert_eq!(raw.len(), (300 * 3 + 1) * 200);
        assert!(
            len * 20 < raw.len(),
            "{len} bytes of IDAT for {} of pixels",
            raw.len()
        );
        // Row 15, pixel 20 is red; row 0 is white.
        assert_eq!(&raw[15 * 901 + 1 + 20 * 3..][..3], &[255, 0, 0]);
        assert_eq!(&raw[1..4], &[255, 255, 255]);
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(800.0), 100.0);
        assert_eq!(tick_step(13.0), 2.0);
        assert!((tick_step(0.3) - 0.05).abs() < 1e-12);
    }
}
