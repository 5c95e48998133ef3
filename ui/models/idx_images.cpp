#include "ui/models/idx_images.h"

#include "core/dataset/dataset_images.h"

namespace shardlens::ui {

QString idxImagesPath(const std::string& spec) {
  return QString::fromStdString(existing_dataset_images(spec));
}

QImage IdxImageCache::image(const QString& path, int64_t index) {
  if (path.isEmpty()) return {};
  if (!m_images || m_path != path) {
    m_images = std::make_shared<IdxImages>(read_idx_images(path.toStdString()));
    m_path = path;
  }
  const IdxImages& im = *m_images;
  if (index < 0 || index >= im.count) return {};
  QImage out(im.cols, im.rows, QImage::Format_Grayscale8);
  const size_t stride = size_t(im.rows) * size_t(im.cols);
  const uint8_t* src = im.pixels.data() + size_t(index) * stride;
  for (int y = 0; y < im.rows; ++y)
    std::copy(src + size_t(y) * size_t(im.cols), src + size_t(y + 1) * size_t(im.cols),
              out.scanLine(y));
  return out;
}

}  // namespace shardlens::ui
