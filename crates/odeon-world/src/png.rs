//! Frames: one pixel per cell, scaled up, written as PNG.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::WorldError;
use crate::rules::{Field, Kind, Obj};

/// Draws `objects` on a black `side × side` image, `scale` pixels per cell: planets
/// blue, trees green (brighter when fuller), creatures red (over trees). Returns RGB
/// bytes, row-major.
///
/// ```
/// use odeon_world::png::draw;
/// use odeon_world::rules::initial;
///
/// let (field, objs) = initial(100, 1);
/// let rgb = draw(&field, &objs, 2);
/// assert_eq!(rgb.len(), (field.side as usize * 2).pow(2) * 3);
/// assert!(rgb.iter().any(|&b| b != 0));
/// ```
pub fn draw(field: &Field, objects: &[Obj], scale: usize) -> Vec<u8> {
    let side = field.side as usize;
    let mut cells = vec![[0u8; 3]; side * side];
    // Draw planets last so that they stay visible; creatures over trees.
    for pass in [Kind::Tree, Kind::Creature, Kind::Planet] {
        for o in objects.iter().filter(|o| o.kind == pass) {
            let c = &mut cells[field.cell(o.x, o.y)];
            match o.kind {
                Kind::Tree => c[1] = c[1].max(60 + (o.energy.min(50) * 3) as u8),
                Kind::Creature => *c = [230, 40, 40],
                Kind::Planet => *c = [70, 110, 255],
            }
        }
    }
    let w = side * scale;
    let mut rgb = vec![0u8; w * w * 3];
    for y in 0..w {
        for x in 0..w {
            let c = cells[(y / scale) * side + x / scale];
            rgb[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
        }
    }
    rgb
}

/// Writes a frame of `objects` to `path` (see [`draw`]).
pub fn write_frame(
    path: &Path,
    field: &Field,
    objects: &[Obj],
    scale: usize,
) -> Result<(), WorldError> {
    let rgb = draw(field, objects, scale);
    let w = (field.side as usize * scale) as u32;
    let file = File::create(path).map_err(|e| WorldError::Io(path.to_owned(), e))?;
    let mut enc = ::png::Encoder::new(BufWriter::new(file), w, w);
    enc.set_color(::png::ColorType::Rgb);
    enc.set_depth(::png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(())
}
