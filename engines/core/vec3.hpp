#pragma once
/// Small 3-vector and 3x3 matrix in double precision for geometry (mm). Plain structs so
/// that CUDA code can use the same layout; heavier linear algebra uses Eigen.
#include <cmath>

namespace penumbra {

struct Vec3 {
  double x = 0, y = 0, z = 0;

  constexpr double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  double& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

constexpr Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
constexpr Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
constexpr Vec3 operator*(double s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
constexpr Vec3 operator*(Vec3 a, double s) { return s * a; }
constexpr Vec3 operator/(Vec3 a, double s) { return {a.x / s, a.y / s, a.z / s}; }
constexpr double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double norm(Vec3 a) { return std::sqrt(dot(a, a)); }
inline Vec3 normalized(Vec3 a) { return a / norm(a); }

/// Row-major 3x3 matrix. For a Grid's direction matrix, column c is the patient-space unit
/// vector along index axis c.
struct Mat3 {
  double m[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

  static Mat3 fromColumns(Vec3 c0, Vec3 c1, Vec3 c2) {
    Mat3 r;
    for (int i = 0; i < 3; ++i) {
      r.m[i][0] = c0[i];
      r.m[i][1] = c1[i];
      r.m[i][2] = c2[i];
    }
    return r;
  }
  Vec3 column(int c) const { return {m[0][c], m[1][c], m[2][c]}; }
  Vec3 operator*(Vec3 v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  Mat3 transposed() const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[j][i];
    return r;
  }
};

}  // namespace penumbra
