//! PNG copies of the plots (`sweep --png`): each SVG rasterised by resvg with a bundled font
//! (DejaVu Sans, `assets/fonts/`, Bitstream Vera licence beside it), so the text renders the same
//! on any machine, with or without fonts installed. No system library is linked.

/// DejaVu Sans, the font every PNG's text is drawn with (the SVGs ask for `sans-serif`).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The family name inside [`FONT`].
const FONT_FAMILY: &str = "DejaVu Sans";

/// Rasterises an SVG of this tool at its own size (one pixel per SVG unit).
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        ..usvg::Options::default()
    };
    {
        let fonts = options.fontdb_mut();
        fonts.load_font_data(FONT.to_vec());
        fonts.set_sans_serif_family(FONT_FAMILY);
    }
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "cannot allocate a {}x{} picture",
            size.width(),
            size.height()
        )
    })?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_with_the_bundled_font() {
        // A white page with one word: with the font, the word leaves dark pixels; the same page
        // without the text leaves none.
        let page = |text: &str| {
            format!(
                r##"<svg width="200" height="60" xmlns="http://www.w3.org/2000/svg"><rect width="200" height="60" fill="#FFFFFF"/><text x="10" y="40" font-family="sans-serif" font-size="24" fill="#000000">{text}</text></svg>"##
            )
        };
        let dark = |png: &[u8]| {
            let decoder = png::Decoder::new(std::io::Cursor::new(png));
            let mut reader = decoder.read_info().unwrap();
            let mut buffer = vec![0; reader.output_buffer_size()];
            let info = reader.next_frame(&mut buffer).unwrap();
            buffer[..info.buffer_size()]
                .chunks(info.color_type.samples())
                .filter(|px| px[0] < 128)
                .count()
        };
        assert!(dark(&svg_to_png(&page("frontier")).unwrap()) > 100);
        assert_eq!(dark(&svg_to_png(&page("")).unwrap()), 0);
        assert!(svg_to_png("<svg").is_err());
    }
}
