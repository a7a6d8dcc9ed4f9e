//! The least-squares line of y on x, with the standard error of its slope.

/// A fitted line y = intercept + slope x.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearFit {
    pub intercept: f64,
    pub slope: f64,
    /// The slope's standard error; `None` with fewer than 4 points (fewer than 2
    /// degrees of freedom, too few to weigh the residuals).
    pub slope_se: Option<f64>,
}

impl LinearFit {
    /// The fit through `points`; `None` with fewer than two, or where every x is one.
    pub fn of(points: &[(f64, f64)]) -> Option<Self> {
        if points.len() < 2 {
            return None;
        }
        let n = points.len() as f64;
        let (mx, my) = points
            .iter()
            .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x / n, sy + y / n));
        let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), (x, y)| {
            (sxy + (x - mx) * (y - my), sxx + (x - mx) * (x - mx))
        });
        if sxx <= 1e-12 {
            return None;
        }
        let slope = sxy / sxx;
        let residuals: f64 = points
            .iter()
            .map(|(x, y)| (y - my - slope * (x - mx)).powi(2))
            .sum();
        Some(Self {
            intercept: my - slope * mx,
            slope,
            slope_se: (points.len() >= 4).then(|| (residuals / (n - 2.0) / sxx).sqrt()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_line_and_a_power_law() {
        let line = LinearFit::of(&[(100.0, 2.0), (200.0, 3.0), (400.0, 5.0)]).unwrap();
        assert!((line.intercept - 1.0).abs() < 1e-9 && (line.slope - 0.01).abs() < 1e-12);
        assert_eq!(line.slope_se, None, "3 points");
        let points: Vec<(f64, f64)> = (1..20)
            .map(|a| {
                let a = f64::from(a * 50);
                (a.ln(), (3.0 * a.powf(-0.45)).ln())
            })
            .collect();
        let fit = LinearFit::of(&points).unwrap();
        assert!((fit.slope + 0.45).abs() < 1e-9, "{fit:?}");
        assert!(fit.slope_se.unwrap() < 1e-9, "{fit:?}");
        // scipy.stats.linregress([1, 2, 3, 4, 5], [1.1, 1.9, 3.2, 3.8, 5.3]): slope 1.03,
        // intercept -0.03, stderr 0.07371114795831933.
        let noisy = [(1.0, 1.1), (2.0, 1.9), (3.0, 3.2), (4.0, 3.8), (5.0, 5.3)];
        let fit = LinearFit::of(&noisy).unwrap();
        assert!((fit.slope - 1.03).abs() < 1e-12 && (fit.intercept + 0.03).abs() < 1e-12);
        assert!((fit.slope_se.unwrap() - 0.07371114795831933).abs() < 1e-12);
        assert_eq!(LinearFit::of(&[(1.0, 2.0), (1.0, 3.0)]), None);
    }
}
