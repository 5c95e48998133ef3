#pragma once
// The 28x28 images of IDX datasets (Fashion-MNIST, or idx:PATH whose image file sits next to
// the label file), loaded once and kept for the sample list.
#include <QImage>
#include <QString>
#include <memory>
#include <string>

#include "core/io/idx.h"

namespace shardlens::ui {

// The image file of a dataset spec, or empty when the dataset has none.
QString idxImagesPath(const std::string& datasetSpec);

class IdxImageCache {
 public:
  // Loads on first use; throws InputError (via the reader) on a bad file.
  QImage image(const QString& path, int64_t index);

 private:
  QString m_path;
  std::shared_ptr<IdxImages> m_images;
};

}  // namespace shardlens::ui
