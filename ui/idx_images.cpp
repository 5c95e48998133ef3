#include "ui/idx_images.h"

#include <QFileInfo>

#include "core/sim/specs.h"

namespace shardlens::ui {

QString idxImagesPath(const std::string& spec) {
  const QString s = QString::fromStdString(spec);
  const auto firstExisting = [](const QStringList& candidates) {
    for (const QString& c : candidates)
      if (QFileInfo::exists(c)) return c;
    return QString();
  };
  if (s.startsWith(QLatin1String("fashion-mnist:"))) {
    const QString dir = QString::fromStdString(fashion_mnist_dir());
    const QString stem =
        s.section(QLatin1Char(':'), 1).section(QLatin1Char(','), 0, 0) == QLatin1String("train")
            ? QStringLiteral("train-images-idx3-ubyte")
            : QStringLiteral("t10k-images-idx3-ubyte");
    return firstExisting({dir + '/' + stem + ".gz", dir + '/' + stem});
  }
  if (s.startsWith(QLatin1String("idx:"))) {
    QString labels = s.mid(4).section(QLatin1Char(','), 0, 0);
    QString images = labels;
    images.replace(QLatin1String("labels-idx1"), QLatin1String("images-idx3"));
    images.replace(QLatin1String("labels"), QLatin1String("images"));
    if (images == labels) return {};
    return firstExisting({images});
  }
  return {};
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
