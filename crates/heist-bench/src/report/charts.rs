//! The report's charts, drawn as SVG with plotters: one kind of chart, a dot plot with a
//! row per kernel, a dot per runtime and a logarithmic axis, used for the speed-up over
//! seq, the fork-join overhead T1/T_S and the time relative to heist-lace.

use plotters::prelude::*;

/// One row of a dot plot: a label and a value per runtime (runtimes without one left
/// out).
pub struct Row {
    /// The kernel, e.g. `fib 32`.
    pub label: String,
    /// `(runtime, value)`; values must be positive.
    pub values: Vec<(String, f64)>,
}

/// A runtime's colour: the same in every chart. heist's runtimes are shades of one hue.
fn colour(runtime: &str) -> RGBColor {
    match runtime {
        "seq" => RGBColor(120, 120, 120),
        "heist-lace" => RGBColor(200, 30, 30),
        "heist-relay" => RGBColor(240, 120, 20),
        "heist-join" => RGBColor(160, 60, 90),
        "heist-lace-claim" => RGBColor(230, 90, 140),
        "rayon" => RGBColor(30, 90, 200),
        "rayon-best" => RGBColor(90, 160, 230),
        "rayon-tls" => RGBColor(20, 40, 120),
        "chili" => RGBColor(40, 160, 70),
        "orx" => RGBColor(130, 200, 60),
        "tbb" => RGBColor(120, 50, 180),
        "omp" => RGBColor(0, 160, 160),
        "omp-guided" => RGBColor(90, 210, 200),
        "gomp" => RGBColor(150, 100, 40),
        _ => RGBColor(0, 0, 0),
    }
}

/// A dot plot as an SVG document: `rows` top to bottom, `x_label` under a log axis, a
/// dashed line at `reference` (1.0: seq's speed, or heist's time).
pub fn dot_plot(
    title: &str,
    x_label: &str,
    rows: &[Row],
    reference: f64,
) -> Result<String, String> {
    let mut runtimes: Vec<&str> = Vec::new();
    for r in rows {
        for (rt, _) in &r.values {
            if !runtimes.contains(&rt.as_str()) {
                runtimes.push(rt);
            }
        }
    }
    let values = rows.iter().flat_map(|r| r.values.iter().map(|v| v.1));
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((reference, reference), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (lo / 1.25, hi * 1.25);
    let height = 110 + 22 * rows.len().max(1) as u32 + 22 * runtimes.len().div_ceil(6) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        draw(&root, title, x_label, rows, &runtimes, (lo, hi), reference)
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw(
    root: &Area,
    title: &str,
    x_label: &str,
    rows: &[Row],
    runtimes: &[&str],
    (lo, hi): (f64, f64),
    reference: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let legend_h = 22 * runtimes.len().div_ceil(6) as u32;
    let (plot, legend) = root.split_vertically(root.dim_in_pixel().1 - legend_h - 4);
    let n = rows.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 18))
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(190)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5..n - 0.5)?;
    let label = |y: &f64| {
        let i = y.round();
        if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < rows.len() {
            rows[rows.len() - 1 - i as usize].label.clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .y_labels(rows.len().max(1) * 2 + 1)
        .y_label_formatter(&label)
        .x_desc(x_label)
        .x_labels(8)
        .x_label_formatter(&|x| tick(*x))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(reference, -0.5), (reference, n - 0.5)],
        BLACK.mix(0.5).stroke_width(1),
    ))?;
    for (i, r) in rows.iter().enumerate() {
        let y = n - 1.0 - i as f64;
        chart.draw_series(LineSeries::new([(lo, y), (hi, y)], BLACK.mix(0.08)))?;
        let dots = r.values.iter().filter(|v| v.1.is_finite() && v.1 > 0.0);
        chart.draw_series(dots.map(|(rt, v)| Circle::new((*v, y), 4, colour(rt).filled())))?;
    }
    for (i, rt) in runtimes.iter().enumerate() {
        let (col, row) = ((i % 6) as i32, (i / 6) as i32);
        let at = (200 + col * 115, 4 + row * 22);
        legend.draw(&Circle::new((at.0, at.1 + 7), 5, colour(rt).filled()))?;
        legend.draw(&Text::new(
            rt.to_string(),
            (at.0 + 9, at.1),
            ("sans-serif", 13),
        ))?;
    }
    Ok(())
}

/// A tick label: `0.05`, `0.5`, `2`, `40`.
fn tick(x: f64) -> String {
    let digits = (1 - x.log10().floor() as i32).clamp(0, 4) as usize;
    format!("{x:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_two_significant_digits_at_most() {
        assert_eq!(tick(0.05), "0.050");
        assert_eq!(tick(0.5), "0.50");
        assert_eq!(tick(2.0), "2.0");
        assert_eq!(tick(40.0), "40");
    }

    #[test]
    fn a_dot_plot_is_an_svg_with_every_label_and_runtime() {
        let rows = vec![
            Row {
                label: "fib 32".into(),
                values: vec![("heist-lace".into(), 1.9), ("tbb".into(), 0.05)],
            },
            Row {
                label: "nqueens 11".into(),
                values: vec![("heist-lace".into(), 1.7), ("omp".into(), 1.2)],
            },
        ];
        let svg = dot_plot("speed-up", "seq's time / time", &rows, 1.0).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for s in [
            "fib 32",
            "nqueens 11",
            "heist-lace",
            "tbb",
            "omp",
            "speed-up",
        ] {
            assert!(svg.contains(s), "no {s}");
        }
        assert_eq!(
            svg.matches("<circle").count(),
            4 + 3,
            "4 dots, 3 legend marks"
        );
    }
}
